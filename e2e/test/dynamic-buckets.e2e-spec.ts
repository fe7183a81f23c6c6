import { accountFires, percentiles, Receiver, sleep, Stack } from '../support';

// Dynamic buckets over the real stack (docs/scaling.md, "Buckets per minute"): with three triggers
// reporting 32 slots each, the migrator gives a heavy minute 21 buckets (a third of the 64 slots left
// without one trigger) instead of the default 10, the scheduler offers 21 slices, the triggers walk them
// all, and every fire of the minute goes out once, on time.
jest.setTimeout(300_000);

const APP = 'e2e-buckets';
const TIMERS = 300;
const ROLES_BUT_MIGRATOR = ['api', 'scheduler', 'trigger', 'executor'] as const;

let stack: Stack;
let receiver: Receiver;
/** The heavy minute: far enough ahead that the migrator, not a first user, records its count. */
let minute: number;
/** Timer id -> the second of the minute it fires at. */
const seconds = new Map<string, number>();

beforeAll(async () => {
  receiver = await Receiver.start();
  minute = Math.ceil((Date.now() + 100_000) / 60_000) * 60_000;
  const at = new Date(minute);
  const hook = JSON.stringify({ url: receiver.url('/buckets'), method: 'POST' });
  stack = await Stack.start({
    // 10 + one bucket per 10 fires would be 40 for the minute's 300 fires: the triggers bound it.
    env: { TIMER_SLICE_BUCKET_FIRES: '10' },
    roles: [...ROLES_BUT_MIGRATOR],
    replicas: { trigger: 3 },
    beforeRoles: async (s) => {
      await s.sql('INSERT IGNORE INTO apps (app) VALUES (?)', [APP]);
      // Once a day, at a second of the heavy minute: 5 fires a second.
      const rows = Array.from({ length: TIMERS }, (_, i) => [APP, `b${i}`, `b${i}`, `${i % 60} ${at.getUTCMinutes()} ${at.getUTCHours()} * * *`, 'UTC', hook, 2]);
      await s.sql('INSERT INTO timers (app, name, live_name, cron, time_zone, notify_http_param, status) VALUES ?', [rows]);
    },
  });
  for (const r of await stack.sql<{ id: string; name: string }>('SELECT id, name FROM timers WHERE app = ?', [APP])) seconds.set(String(r.id), Number(r.name.slice(1)) % 60);
  // The migrator starts once the three triggers have reported their slots.
  const slots = `${stack.keyPrefix}trigger-slots`;
  for (let i = 0; i < 100 && (await stack.redis().hlen(slots)) < 3; i++) await sleep(200);
  expect(await stack.redis().hlen(slots)).toBe(3);
  stack.spawn('migrator');
  await stack.waitHealthy('migrator');
});
afterAll(async () => {
  await stack?.stop();
  await receiver?.close();
});

it('gives a heavy minute as many buckets as the live triggers can walk, and delivers each of its fires once', async () => {
  const counted = `${stack.keyPrefix}slice-buckets:${minute}`;
  for (let i = 0; i < 150 && (await stack.redis().get(counted)) === null; i++) await sleep(200);
  expect(await stack.redis().get(counted)).toBe('21');
  // Its fires are indexed in buckets beyond the default's 10.
  const buckets = async () => new Set((await stack.redis().keys(`${stack.keyPrefix}slice:${minute}:*`)).map((k) => Number(k.split(':').pop())));
  for (let i = 0; i < 150 && (await buckets()).size < 21; i++) await sleep(200);
  expect([...(await buckets())].some((b) => b >= 10)).toBe(true);

  await sleep(minute + 60_000 - Date.now() + 5_000);
  const expected = [...seconds].map(([id, second]) => `${id}-${minute + second * 1000}`);
  const account = accountFires(receiver.deliveries, expected, seconds.keys());
  const p = percentiles(account.lateness);
  console.log(`buckets: ${account.expected} fires in 21 buckets, ${account.delivered} delivered, ${account.missing.length} missing, ${account.duplicates.length} doubled; lateness ms p50 ${p.p50} p99 ${p.p99} max ${p.max}`);
  expect(account.expected).toBe(TIMERS);
  expect(account.missing.slice(0, 10)).toEqual([]);
  expect(account.duplicates).toEqual([]);
  // Every slice found a slot: no fire waited for the minute's end.
  expect(p.max).toBeLessThan(5_000);
});
