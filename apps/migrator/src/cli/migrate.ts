import 'reflect-metadata';
import { runMigrations } from '@timer/dal';
import { ConfigError, loadConfig, MysqlEnv } from '@timer/platform';

// One-shot schema migration (`npm run migrate`, the Helm hook Job, `npm run up`): applies what is
// pending and exits; running it again is a no-op.
async function main(): Promise<void> {
  const { TIMER_MYSQL_URL } = loadConfig(MysqlEnv);
  const ran = await runMigrations(TIMER_MYSQL_URL);
  process.stdout.write(ran.length > 0 ? `applied migrations: ${ran.join(', ')}\n` : 'schema is up to date\n');
}

main().catch((e: unknown) => {
  process.stderr.write(`migrate: ${e instanceof ConfigError ? e.message : e instanceof Error ? e.stack : String(e)}\n`);
  process.exit(1);
});
