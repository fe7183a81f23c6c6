import 'reflect-metadata';
import Redis from 'ioredis';
import { parseArgs } from 'util';
import { MINUTE_MS, minuteOf, TOPICS } from '@timer/contracts';
import { ConfigError, loadConfig, PulsarEnv, RedisEnv } from '@timer/platform';
import { PulsarAdmin, WsPulsarClient } from '@timer/pulsar';
import { BucketsService } from './buckets.service';
import { OpsService } from './ops.service';
import { formatBuckets, formatPeek, formatTopics, formatTriggers } from './report.format';

const USAGE = `usage: npm run ops -- <command> [options]
  topics [--watch SECONDS] [--json]      backlog, rates, consumers of every topic and subscription
  peek [TOPIC] [--count N] [--json]      oldest messages of TOPIC (default ${TOPICS.deadLetter}), not consumed
  replay [--from TOPIC] [--to TOPIC] [--max N]
                                         move the dead letters present now back, each fire once
                                         (default ${TOPICS.deadLetter} -> ${TOPICS.catchUp}: dead letters are late, so
                                         they take the catch-up lane, not the one of fires due now)
  buckets [--from TIME] [--minutes N] [--json]
                                         each minute's bucket count (slices) and slices done, from
                                         TIME (ISO 8601 or epoch ms; default 5 minutes ago), N minutes (default 15),
                                         and the live triggers' slots that bound the counts
Reads TIMER_PULSAR_URL, TIMER_PULSAR_TOKEN, TIMER_PULSAR_TENANT and TIMER_PULSAR_NAMESPACE;
buckets reads TIMER_REDIS_URL and TIMER_REDIS_KEY_PREFIX instead.`;

async function main(argv: string[]): Promise<void> {
  const { positionals, values } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      json: { type: 'boolean', default: false },
      watch: { type: 'string' },
      count: { type: 'string', default: '10' },
      from: { type: 'string' },
      to: { type: 'string', default: TOPICS.catchUp },
      max: { type: 'string', default: '1000' },
      minutes: { type: 'string', default: '15' },
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
  if (command === 'buckets') {
    const from = values.from === undefined ? minuteOf(Date.now()) - 5 * MINUTE_MS : minuteOf(instant(values.from));
    const redisEnv = loadConfig(RedisEnv);
    const redis = new Redis(redisEnv.TIMER_REDIS_URL, { maxRetriesPerRequest: 1, lazyConnect: true });
    try {
      const buckets = new BucketsService(redis, redisEnv.TIMER_REDIS_KEY_PREFIX);
      const rows = await buckets.minutes(from, positive('minutes', values.minutes));
      process.stdout.write(`${values.json ? JSON.stringify(rows) : `${formatBuckets(rows)}\n${formatTriggers(await buckets.triggers(Date.now()))}`}\n`);
    } finally {
      redis.disconnect();
    }
    return;
  }
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
        const result = await ops.replay(values.from ?? TOPICS.deadLetter, values.to!, positive('max', values.max));
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

/** `--from` of `buckets`: epoch ms or an ISO 8601 date. */
function instant(raw: string): number {
  const at = /^\d+$/.test(raw) ? Number(raw) : Date.parse(raw);
  if (!Number.isSafeInteger(at)) throw new ConfigError([`--from: expected an ISO 8601 date or epoch ms, got ${JSON.stringify(raw)}`]);
  return at;
}

main(process.argv.slice(2)).catch((e: unknown) => {
  process.stderr.write(`ops: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exit(1);
});
