import 'reflect-metadata';
import { parseArgs } from 'util';
import { TOPICS } from '@timer/contracts';
import { ConfigError, loadConfig, PulsarEnv } from '@timer/platform';
import { PulsarAdmin, WsPulsarClient } from '@timer/pulsar';
import { OpsService } from './ops.service';
import { formatPeek, formatTopics } from './report.format';

const USAGE = `usage: npm run ops -- <command> [options]
  topics [--watch SECONDS] [--json]      backlog, rates, consumers of every topic and subscription
  peek [TOPIC] [--count N] [--json]      oldest messages of TOPIC (default ${TOPICS.deadLetter}), not consumed
  replay [--from TOPIC] [--to TOPIC] [--max N]
                                         move the dead letters present now back, each fire once
                                         (default ${TOPICS.deadLetter} -> ${TOPICS.catchUp}: dead letters are late, so
                                         they take the catch-up lane, not the one of fires due now)
Reads TIMER_PULSAR_URL, TIMER_PULSAR_TOKEN, TIMER_PULSAR_TENANT and TIMER_PULSAR_NAMESPACE.`;

async function main(argv: string[]): Promise<void> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      json: { type: 'boolean', default: false },
      watch: { type: 'string' },
      count: { type: 'string', default: '10' },
      from: { type: 'string', default: TOPICS.deadLetter },
      to: { type: 'string', default: TOPICS.catchUp },
      max: { type: 'string', default: '1000' },
      help: { type: 'boolean', default: false },
    },
  });
  const [command, arg] = positionals;
  if (values.help || !command) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const positive = (name: string, raw: string | undefined) => {
    const n = Number(raw);
    if (!Number.isInteger(n) || n < 1) throw new ConfigError([`--${name}: expected a positive whole number, got ${JSON.stringify(raw)}`]);
    return n;
  };
  const env = loadConfig(PulsarEnv);
  const connection = { serviceUrl: env.TIMER_PULSAR_URL, token: env.TIMER_PULSAR_TOKEN, tlsAllowInsecure: env.TIMER_PULSAR_TLS_ALLOW_INSECURE };
  const client = new WsPulsarClient(connection);
  const ops = new OpsService(new PulsarAdmin(connection), client, env.TIMER_PULSAR_TENANT, env.TIMER_PULSAR_NAMESPACE);
  const print = (text: string, data: unknown) => process.stdout.write(`${values.json ? JSON.stringify(data) : text}\n`);
  try {
    switch (command) {
      case 'topics': {
        const every = values.watch === undefined ? 0 : positive('watch', values.watch);
        for (;;) {
          const rows = await ops.topics();
          print(formatTopics(rows), rows);
          if (!every) break;
          await new Promise((r) => setTimeout(r, every * 1000));
        }
        break;
      }
      case 'peek': {
        const local = arg ?? TOPICS.deadLetter;
        const messages = await ops.peek(local, positive('count', values.count));
        print(formatPeek(ops.topic(local), messages), messages.map((m) => ({ ...m, payload: m.payload.toString('utf8') })));
        break;
      }
      case 'replay': {
        const result = await ops.replay(values.from!, values.to!, positive('max', values.max));
        const duplicates = result.duplicates > 0 ? ` (${result.duplicates} further dead letter(s) of a fire replayed in this run acked, not sent again)` : '';
        print(`replayed ${result.replayed} message(s) from ${result.from} to ${result.to}${duplicates}`, result);
        break;
      }
      default:
        throw new ConfigError([`unknown command ${JSON.stringify(command)}\n${USAGE}`]);
    }
  } finally {
    await client.close();
  }
}

main(process.argv.slice(2)).catch((e: unknown) => {
  process.stderr.write(`ops: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
