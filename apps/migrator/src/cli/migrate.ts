import 'reflect-metadata';
import { Logger } from '@nestjs/common';
import { runMigrations } from '@timer/dal';
import { bootLogSettings, ConfigError, createRoleLogger, loadConfig, MysqlEnv } from '@timer/platform';

// One-shot schema migration (`npm run migrate`, the Helm hook Job, `npm run up`): applies what is
// pending and exits; running it again is a no-op. Logs as the roles do (TIMER_LOG_FORMAT=json: JSON lines).
const logger = createRoleLogger('timer-migrate', bootLogSettings());
Logger.overrideLogger(logger);

async function main(): Promise<void> {
  const mysql = loadConfig(MysqlEnv);
  const ran = await runMigrations(mysql.TIMER_MYSQL_URL, { tlsCaFile: mysql.TIMER_MYSQL_TLS_CA_FILE });
  logger.log(ran.length > 0 ? `applied migrations: ${ran.join(', ')}` : 'schema is up to date');
}

main().catch((e: unknown) => {
  logger.fatal(`migrate: ${e instanceof ConfigError ? e.message : e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
  process.exit(1);
});
