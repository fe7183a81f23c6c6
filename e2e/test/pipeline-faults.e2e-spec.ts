import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { brokerScriptEnv } from '@timer/testing';
import { accountFires, describeAccount, nextSecond, percentiles, periodicFireIds, pollUntil, Receiver, sleep, sleepUntil, Stack } from '../support';

// Faults during a run: SIGKILL of the trigger mid-minute and of the executor mid-callback, a wipe of
// Redis, a broker restart. Each scenario runs a few every-second timers over a window, injects the
// fault inside it and then checks that every fire of the window was delivered (answered 2xx) and
// none twice. A delivery the caller abandoned (the executor died while the receiver held the
// request) is at-least-once territory: the fire must be delivered again, and that redelivery is not
// counted as a duplicate. Leases are shortened so recovery fits the test's time.
//
// Redis: this file's stack has a Redis database of its own (E2E_FAULTS_REDIS_DB, default 14), so the
// "FLUSHALL" scenario is an honest FLUSHDB of everything the service had (locks, cursors, slice
// index, done marks) without touching DB 1, which other test files share.
// The broker restart (`deploy/local/pulsar.sh restart`) disturbs everyone using the broker: it is the
// last scenario, and short.
jest.setTimeout(300_000);

const ROOT = join(__dirname, '..', '..');
const APP = 'e2e-faults';
const TIMERS = 4;
const REDIS_DB = Number(process.env.E2E_FAULTS_REDIS_DB ?? 14);
const ENV = {
  TIMER_WINDOW_MINUTES: '5',
  TIMER_SLICE_LEASE_MS: '5000',
  TIMER_CALLBACK_TIMEOUT_MS: '3000',
  // The lease below is checked against the longest callback a timer may ask for as well.
  TIMER_CALLBACK_TIMEOUT_MAX_MS: '3000',
  TIMER_EXECUTOR_MAX_EARLY_WAIT_MS: '2000',
  TIMER_EXECUTOR_CLAIM_LEASE_MS: '17000',
  TIMER_TRIGGER_RECONCILE_MS: '2000',
};

let stack: Stack;
let receiver: Receiver;
let run = 0;

beforeAll(async () => {
  receiver = await Receiver.start();
  stack = await Stack.start({ env: ENV, redisDb: REDIS_DB });
}, 150_000);

afterAll(async () => {
  await stack?.stop();
  await receiver?.close();
});

interface FaultRun {
  timerIds: string[];
  from: number;
  to: number;
  faultAt: number;
}

/**
 * Creates TIMERS every-second timers, injects `fault` `faultAfterMs` into the window [from, to), then
 * waits (up to `settleMs` after `to`) until every fire of the window was answered, plus 3 s for any
 * duplicate to show. The timers are disabled only afterwards (a disabled timer's late fire is recorded
 * missed, which would hide whether the fault lost it).
 */
async function faultRun(name: string, windowMs: number, faultAfterMs: number, fault: () => Promise<void>, settleMs: number, prepare?: (ids: string[]) => void): Promise<FaultRun> {
  run++;
  const timerIds: string[] = [];
  for (let i = 0; i < TIMERS; i++) {
    timerIds.push(await stack.api.createTimer({ app: APP, name: `${name}-${run}-${i}`, cron: '* * * * * *', notifyHTTPParam: { url: receiver.url(`/${name}`), method: 'GET' } }));
  }
  prepare?.(timerIds);
  for (const id of timerIds) await stack.api.enable(APP, id);
  const from = nextSecond(2000);
  const to = from + windowMs;
  const faultAt = from + faultAfterMs;
  await sleepUntil(faultAt);
  await fault();
  await sleepUntil(to);
  const expected = timerIds.flatMap((id) => periodicFireIds(id, from, to));
  await pollUntil(() => accountFires(window(timerIds, from, to), expected, timerIds).missing.length === 0, settleMs, 500);
  await sleep(3000);
  for (const id of timerIds) await stack.api.unable(APP, id);
  return { timerIds, from, to, faultAt };
}

function restartBroker(): Promise<{ status: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn('bash', [join(ROOT, 'deploy/local/pulsar.sh'), 'restart'], { cwd: ROOT, env: brokerScriptEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    const timer = setTimeout(() => child.kill('SIGTERM'), 150_000);
    child.once('exit', (status) => {
      clearTimeout(timer);
      resolve({ status, output });
    });
  });
}

const window = (ids: string[], from: number, to: number) => {
  const set = new Set(ids);
  return receiver.deliveries.filter((d) => set.has(d.timerId) && d.scheduledAt >= from && d.scheduledAt < to);
};

async function expectNoLossNoDuplicate(r: FaultRun, label: string): Promise<void> {
  const expected = r.timerIds.flatMap((id) => periodicFireIds(id, r.from, r.to));
  const account = accountFires(window(r.timerIds, r.from, r.to), expected, r.timerIds);
  const summary = describeAccount(account);
  process.stdout.write(`${label}: ${JSON.stringify({ ...summary, latenessMs: percentiles(account.lateness) })}\n`);
  expect(summary).toMatchObject({ expected: expected.length, delivered: expected.length, missingCount: 0, duplicateCount: 0, malformed: 0 });
  expect(account.early.map((d) => `${d.fireId} ${d.scheduledAt - d.receivedAt} ms early`)).toEqual([]);
  // The records agree: each fire of the window succeeded.
  const rows = await stack.sql<{ n: number }>('SELECT COUNT(*) AS n FROM tasks WHERE timer_id IN (?) AND run_at >= ? AND run_at < ? AND status = 2', [
    r.timerIds,
    r.from,
    r.to,
  ]);
  expect(Number(rows[0].n)).toBe(expected.length);
}

describe('the pipeline under faults', () => {
  it('SIGKILL of the trigger mid-minute loses no fire and delivers none twice', async () => {
    // Keep the kill away from a minute boundary so a slice is being walked when it happens.
    const phase = Date.now() % 60_000;
    if (phase > 45_000) await sleep(60_000 - phase + 3000);
    const r = await faultRun(
      'trigger-kill',
      15_000,
      5_000,
      async () => {
        await stack.kill('trigger', 'SIGKILL');
        await sleep(1000);
        await stack.restart('trigger');
      },
      60_000,
    );
    expect(new Date(r.faultAt).getUTCSeconds()).toBeGreaterThan(2);
    await expectNoLossNoDuplicate(r, 'trigger SIGKILL');
  });

  it('SIGKILL of the executor mid-callback loses no fire and delivers none twice', async () => {
    let aborted = 0;
    let undo: () => void = () => undefined;
    let ids: string[] = [];
    const r = await faultRun(
      'executor-kill',
      15_000,
      5_000,
      async () => {
        // Callbacks are held 1.5 s: wait until some are in flight, then kill.
        const held = await pollUntil(() => receiver.inFlight > 0, 5000, 20);
        expect(held).toBe(true);
        const inFlight = new Set(receiver.deliveries.filter((d) => d.status === 0 && !d.aborted && ids.includes(d.timerId)));
        await stack.kill('executor', 'SIGKILL');
        await sleep(300);
        aborted = [...inFlight].filter((d) => d.aborted).length;
        await sleep(700);
        await stack.restart('executor');
      },
      90_000,
      (timerIds) => {
        ids = timerIds;
        undo = receiver.delayTimers(timerIds, 1500);
      },
    );
    undo();
    process.stdout.write(`executor SIGKILL: ${aborted} callback(s) were in flight and abandoned\n`);
    expect(aborted).toBeGreaterThan(0);
    await expectNoLossNoDuplicate(r, 'executor SIGKILL');
  });

  it('a Redis wipe (FLUSHDB of the service\'s own database) during a run loses no fire', async () => {
    const r = await faultRun(
      'redis-flush',
      15_000,
      5_000,
      async () => {
        expect(await stack.redis().flushdb()).toBe('OK');
      },
      60_000,
    );
    await expectNoLossNoDuplicate(r, 'Redis FLUSHDB');
  });

  it('a broker restart loses no fire', async () => {
    let restartMs = 0;
    const r = await faultRun(
      'broker-restart',
      20_000,
      3_000,
      async () => {
        const t0 = Date.now();
        // Asynchronously: the receiver lives in this process and must keep answering meanwhile.
        const res = await restartBroker();
        restartMs = Date.now() - t0;
        expect({ status: res.status, output: res.output.slice(-2000) }).toEqual({ status: 0, output: expect.any(String) });
      },
      120_000,
    );
    process.stdout.write(`broker restart took ${restartMs} ms\n`);
    await expectNoLossNoDuplicate(r, 'broker restart');
  });
});
