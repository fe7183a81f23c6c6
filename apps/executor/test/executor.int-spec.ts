/**
 * The executor against real MariaDB, Redis and Pulsar, calling a local HTTP receiver on 127.0.0.1.
 * Messages are published to timer-tasks as the trigger does; rows are created first, as the
 * migrator / api do.
 */
import { fireId, TOPICS } from '@timer/contracts';
import { AppRepository, TaskStatus, TimerStatus } from '@timer/dal';
import { verifySignature } from '@timer/callback';
import type { PulsarRecord } from '@timer/pulsar-transport';
import { CallMarks, FireClaims, RescueMarks } from '@timer/redis';
import { eventually } from '@timer/testing';
import { FirePublisher } from '../src/fire/fire-publisher';
import { ExecutorHarness, harnessWithReceiver, metricValue } from './executor-harness';

jest.setTimeout(90_000);

type ClaimStore = 'redis' | 'mysql';

/**
 * What an executor leaves while it holds a fire's first attempt: with claims in MySQL the row running,
 * attempt 1, claimed by `token` until `until`; with claims in Redis the fire's claim key, the row pending.
 */
const holdRow = async (h: ExecutorHarness, store: ClaimStore, timerId: string, runAt: number, token: string, until: number): Promise<void> => {
  if (store === 'redis') {
    const claims = h.app.get(FireClaims);
    await claims.claimMany([{ fireId: fireId(timerId, runAt), token: `${token}@${until}` }], 60_000, 'it');
    return;
  }
  await h.db.query('UPDATE tasks SET status = ?, attempt = 1, claimed_by = ?, claimed_until = ? WHERE timer_id = ? AND run_at = ?', [TaskStatus.Running, token, until, timerId, runAt]);
};

const settled = (h: ExecutorHarness, timerId: string, runAt: number, status: number = TaskStatus.Succeeded) =>
  eventually(`fire ${timerId}-${runAt} with status ${status}`, async () => {
    const t = await h.task(timerId, runAt);
    return t && t.status === status ? t : undefined;
  }, 30_000);

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.each(['redis', 'mysql'] as const)('executor (allowPrivate: true, first attempts claimed in %s)', (store) => {
  const { h, receiver } = harnessWithReceiver({ TIMER_CLAIM_STORE: store });

  it('delivers a task once with the contract headers and signature, and records it succeeded with its lateness', async () => {
    const secret = await h.app.get(AppRepository).rotateSecret('app-it');
    const timer = await h.timer({ url: receiver.url('/ok') });
    const runAt = Date.now() + 1_500; // early: the executor waits for run_at
    await h.row(timer.id, runAt);
    await h.publish(timer.id, runAt);
    const task = await settled(h, timer.id, runAt);
    const calls = receiver.callsTo('/ok');
    expect(calls).toHaveLength(1);
    const c = calls[0];
    expect(c.at).toBeGreaterThanOrEqual(runAt - 5); // not before run_at (ms rounding aside)
    expect(c.method).toBe('POST');
    expect(c.body).toBe('{"hello":"world"}');
    expect(c.headers['x-timer-id']).toBe(timer.id);
    expect(c.headers['x-timer-fire-id']).toBe(`${timer.id}-${runAt}`);
    expect(c.headers['x-timer-scheduled-at']).toBe(String(runAt));
    expect(c.headers['x-timer-attempt']).toBe('1');
    expect(c.headers['x-custom']).toBe('a');
    expect(verifySignature(secret, String(c.headers['x-timer-signature']), c.body, 60_000)).toBe(true);
    expect(task).toMatchObject({ status: TaskStatus.Succeeded, attempt: 1, httpStatus: 200, output: 'ok', error: null, claimedUntil: null });
    expect(task!.latenessMs).toBeGreaterThanOrEqual(0);
    expect(task!.latenessMs).toBeLessThan(5_000);
    expect(task!.costMs).toBeGreaterThanOrEqual(0);
    expect(await metricValue(h, 'timer_deliveries_total', { outcome: 'succeeded' })).toBeGreaterThanOrEqual(1);
    expect(await metricValue(h, 'timer_fire_lateness_seconds_count')).toBeGreaterThanOrEqual(1);
  });

  it('delivers a message sent twice once and counts one duplicate (after settling, and while in flight)', async () => {
    const timer = await h.timer({ url: receiver.url('/twice') });
    const before = await metricValue(h, 'timer_duplicate_messages_total');
    // Sequential: the second copy arrives after the fire settled.
    const runAt = Date.now();
    await h.row(timer.id, runAt);
    await h.publish(timer.id, runAt);
    await settled(h, timer.id, runAt);
    await h.publish(timer.id, runAt);
    await eventually('one duplicate counted', async () => (await metricValue(h, 'timer_duplicate_messages_total')) === before + 1, 15_000);
    expect(await metricValue(h, 'timer_duplicate_messages_total', { reason: 'settled' })).toBeGreaterThanOrEqual(1);
    // Concurrent: both copies arrive before run_at; one claims, the other is fenced off.
    const runAt2 = Date.now() + 1_500;
    await h.row(timer.id, runAt2);
    await Promise.all([h.publish(timer.id, runAt2), h.publish(timer.id, runAt2)]);
    await settled(h, timer.id, runAt2);
    await eventually('second duplicate counted', async () => (await metricValue(h, 'timer_duplicate_messages_total')) === before + 2, 15_000);
    await pause(1_000);
    expect(receiver.callsTo('/twice').map((c) => c.headers['x-timer-scheduled-at'])).toEqual([String(runAt), String(runAt2)]);
  });

  it('retries a failing callback with growing delays, then dead-letters it and records failed at attempt = max', async () => {
    receiver.respond('/fail', 500);
    const timer = await h.timer({ url: receiver.url('/fail'), maxAttempts: 3, backoffMs: 1_000 });
    const runAt = Date.now();
    await h.row(timer.id, runAt);
    await h.publish(timer.id, runAt);
    const task = await settled(h, timer.id, runAt, TaskStatus.Failed);
    const calls = receiver.callsTo('/fail');
    expect(calls.map((c) => c.headers['x-timer-attempt'])).toEqual(['1', '2', '3']);
    expect(new Set(calls.map((c) => c.headers['x-timer-fire-id']))).toEqual(new Set([`${timer.id}-${runAt}`]));
    // backoff 1000 ms * 2^(n-1), -20 % jitter at worst: at least 800 ms, then at least 1600 ms.
    expect(calls[1].at - calls[0].at).toBeGreaterThanOrEqual(750);
    expect(calls[2].at - calls[1].at).toBeGreaterThanOrEqual(1_550);
    expect(task).toMatchObject({ status: TaskStatus.Failed, attempt: 3, httpStatus: 500, error: 'HTTP 500', output: 'failing on purpose' });
    const dead = await eventually('the dead letter', async () => {
      const all = await h.deadLetters();
      return all.find((m) => JSON.parse(m.payload.toString('utf8')).timerId === timer.id);
    });
    expect(JSON.parse(dead.payload.toString('utf8'))).toEqual({ timerId: timer.id, runAt, fireId: `${timer.id}-${runAt}`, attempt: 3 });
    expect(dead.properties).toMatchObject({ 'x-timer-error': 'HTTP 500', 'x-timer-http-status': '500', 'x-timer-attempts': '3', 'x-timer-reason': 'attempts exhausted' });
    expect(await metricValue(h, 'timer_retries_total')).toBeGreaterThanOrEqual(2);
    expect(await metricValue(h, 'timer_dead_lettered_total')).toBeGreaterThanOrEqual(1);
  });

  it('records a fire of a disabled timer missed and does not call', async () => {
    const timer = await h.timer({ url: receiver.url('/disabled'), status: TimerStatus.Disabled });
    const runAt = Date.now();
    await h.row(timer.id, runAt);
    await h.publish(timer.id, runAt);
    const task = await settled(h, timer.id, runAt, TaskStatus.Missed);
    expect(task).toMatchObject({ status: TaskStatus.Missed, error: 'timer disabled' });
    expect(receiver.callsTo('/disabled')).toHaveLength(0);
    expect(await metricValue(h, 'timer_missed_fires_total', { reason: 'timer_disabled' })).toBeGreaterThanOrEqual(1);
  });

  it('records a fire 2 h late under fire_late missed with the reason, without calling', async () => {
    const timer = await h.timer({ url: receiver.url('/late') });
    const runAt = Date.now() - 2 * 3_600_000;
    await h.row(timer.id, runAt);
    await h.publish(timer.id, runAt);
    const task = await settled(h, timer.id, runAt, TaskStatus.Missed);
    expect(task!.error).toMatch(/^late by \d+ ms$/);
    expect(Number(/\d+/.exec(task!.error!)![0])).toBeGreaterThanOrEqual(2 * 3_600_000);
    expect(task!.latenessMs).toBeGreaterThanOrEqual(2 * 3_600_000);
    expect(receiver.callsTo('/late')).toHaveLength(0);
  });

  it('delivers, exactly once more, a fire whose executor died mid-callback (its claim expired)', async () => {
    const timer = await h.timer({ url: receiver.url('/crashed') });
    const runAt = Date.now() - 1_000;
    await h.row(timer.id, runAt);
    // What a killed executor leaves: running, attempt 1, its claim over; the broker redelivers its message.
    await holdRow(h, store, timer.id, runAt, 'dead-executor', Date.now() - 1);
    await h.publish(timer.id, runAt);
    const task = await settled(h, timer.id, runAt);
    expect(task).toMatchObject({ attempt: 1, httpStatus: 200 });
    expect(task!.claimedBy).not.toBe('dead-executor');
    await pause(1_000);
    expect(receiver.callsTo('/crashed')).toHaveLength(1);
  });

  it('rechecks a fire whose dead holder still has time on its lease, and delivers it once the lease ends', async () => {
    const timer = await h.timer({ url: receiver.url('/crashed-fresh') });
    const runAt = Date.now() - 1_000;
    await h.row(timer.id, runAt);
    const leaseEnd = Date.now() + 2_000;
    await holdRow(h, store, timer.id, runAt, 'dead-executor', leaseEnd);
    await h.publish(timer.id, runAt); // the redelivery arrives before the lease ends: deferred, not acked as done
    const task = await settled(h, timer.id, runAt);
    const calls = receiver.callsTo('/crashed-fresh');
    expect(calls).toHaveLength(1);
    expect(calls[0].at).toBeGreaterThanOrEqual(leaseEnd);
    expect(task).toMatchObject({ attempt: 1, status: TaskStatus.Succeeded });
    await pause(1_000);
    expect(receiver.callsTo('/crashed-fresh')).toHaveLength(1);
  });

  it('takes a fire over from an executor process that is gone, before its lease ends, and flags the callback', async () => {
    const timer = await h.timer({ url: receiver.url('/holder-gone') });
    const runAt = Date.now() - 1_000;
    await h.row(timer.id, runAt);
    const leaseEnd = Date.now() + 50_000;
    // A claim token of a process whose liveness key does not exist (SIGKILLed: it stopped beating).
    await holdRow(h, store, timer.id, runAt, 'gone-host:4242:deadbeef:7', leaseEnd);
    const published = Date.now();
    await h.publish(timer.id, runAt);
    const task = await settled(h, timer.id, runAt);
    const calls = receiver.callsTo('/holder-gone');
    expect(calls).toHaveLength(1);
    expect(calls[0].at - published).toBeLessThan(5_000);
    expect(calls[0].headers['x-timer-redelivery']).toBe('1');
    expect(task).toMatchObject({ attempt: 1, status: TaskStatus.Succeeded });
    expect(task!.claimedBy).not.toBe('gone-host:4242:deadbeef:7');
    expect(await metricValue(h, 'timer_duplicate_deliveries_total', { reason: 'holder_died' })).toBe(1);
  });

  it('takes a fire over from a dead executor that had not started its call, and delivers it as a first delivery', async () => {
    const timer = await h.timer({ url: receiver.url('/holder-gone-uncalled') });
    const runAt = Date.now() - 1_000;
    await h.row(timer.id, runAt);
    // The dead process had opened its chunk of claims and marked claim 3's call, not claim 4's.
    const marks = h.app.get(CallMarks);
    await marks.open('gone-host:4243:deadbeef', 0, 60_000);
    await marks.markMany('gone-host:4243:deadbeef', 0, [3], 60_000);
    await holdRow(h, store, timer.id, runAt, 'gone-host:4243:deadbeef:4', Date.now() + 50_000);
    const before = await metricValue(h, 'timer_duplicate_deliveries_total', { reason: 'holder_died' });
    await h.publish(timer.id, runAt);
    const task = await settled(h, timer.id, runAt);
    const calls = receiver.callsTo('/holder-gone-uncalled');
    expect(calls).toHaveLength(1);
    expect(calls[0].headers['x-timer-redelivery']).toBeUndefined();
    expect(task).toMatchObject({ attempt: 1, status: TaskStatus.Succeeded });
    expect(await metricValue(h, 'timer_duplicate_deliveries_total', { reason: 'holder_died' })).toBe(before);
    expect(await metricValue(h, 'timer_executor_takeovers_total', { call: 'not_called' })).toBe(1);
    // Fenced off: the dead process, were it only paused, could not start that call any more.
    await expect(marks.markMany('gone-host:4243:deadbeef', 0, [4], 60_000)).resolves.toEqual([false]);
  });

  it('re-creates a missing row and records the fire of a deleted timer missed', async () => {
    const timer = await h.timer({ url: receiver.url('/deleted') });
    await h.db.query('UPDATE timers SET deleted_at = ?, live_name = NULL, status = ? WHERE id = ?', [Date.now(), TimerStatus.Disabled, timer.id]);
    const runAt = Date.now();
    await h.publish(timer.id, runAt); // the api's delete removed the pending row after the trigger published
    const task = await settled(h, timer.id, runAt, TaskStatus.Missed);
    expect(task!.error).toBe('timer deleted');
    expect(receiver.callsTo('/deleted')).toHaveLength(0);
  });

  it('hands back the fires of one turn as one message that comes back from the broker and delivers each of them once', async () => {
    const timers = await Promise.all([1, 2, 3].map(() => h.timer({ url: receiver.url('/handed-back') })));
    const runAt = Date.now();
    for (const t of timers) await h.row(t.id, runAt);
    const emit = jest.spyOn(h.client, 'emit');
    const fires = timers.map((t) => ({ timerId: t.id, runAt, fireId: fireId(t.id, runAt), attempt: 1 }));
    await Promise.all(fires.map((f) => h.app.get(FirePublisher).handBack(f, Date.now() + 500, 1)));
    const sent = emit.mock.calls.filter(([topic]) => topic === TOPICS.retries).map(([, record]) => record as PulsarRecord);
    emit.mockRestore();
    expect(sent).toHaveLength(1);
    expect(sent[0].options?.properties).toMatchObject({ 'x-timer-deferrals': '1', 'x-timer-fires': '3' });
    // Stored, its fires are marked as waiting in the broker, so the reconciler does not re-send them meanwhile.
    await eventually('the hand-back marks written', async () => (await h.app.get(RescueMarks).waitingInBroker(fires.map((f) => f.fireId))).every(Boolean));
    for (const t of timers) expect(await settled(h, t.id, runAt)).toMatchObject({ status: TaskStatus.Succeeded, attempt: 1 });
    await pause(500);
    expect(receiver.callsTo('/handed-back').map((c) => c.headers['x-timer-fire-id']).sort()).toEqual(fires.map((f) => f.fireId).sort());
  });

  it('finishes an in-flight callback and writes its outcome when the transport drains (shutdown order)', async () => {
    const timer = await h.timer({ url: receiver.url('/drain') });
    const runAt = Date.now() + 1_000;
    await h.row(timer.id, runAt);
    await h.publish(timer.id, runAt);
    const claimed = async () =>
      store === 'redis' ? (await h.app.get(FireClaims).claimMany([{ fireId: fireId(timer.id, runAt), token: null }], 60_000, 'it')).replies[0].kind === 'held' : (await h.task(timer.id, runAt))?.status === TaskStatus.Running;
    await eventually('the fire claimed', claimed);
    // Close the transport as the SIGTERM drain does first (Nest's shutdown hooks, closing MySQL, follow
    // it); the row must be written by the time it returns.
    await Promise.all(h.app.getMicroservices().map((m) => m.close()));
    expect(await h.taskOutside(timer.id, runAt)).toEqual({ status: TaskStatus.Succeeded, attempt: 1 });
    expect(receiver.callsTo('/drain')).toHaveLength(1);
  });
});

describe('executor (allowPrivate: false)', () => {
  const { h, receiver } = harnessWithReceiver({ TIMER_CALLBACK_ALLOW_PRIVATE: 'false' });

  it('refuses a callback to a private address: failed at once, no retry, dead-lettered', async () => {
    const timer = await h.timer({ url: receiver.url('/private'), maxAttempts: 3, backoffMs: 100 });
    const runAt = Date.now();
    await h.row(timer.id, runAt);
    await h.publish(timer.id, runAt);
    const task = await settled(h, timer.id, runAt, TaskStatus.Failed);
    expect(task!.attempt).toBe(1);
    expect(task!.error).toMatch(/private|loopback|127\.0\.0\.1/i);
    expect(task!.httpStatus).toBeNull();
    await pause(1_000);
    expect(receiver.calls).toHaveLength(0);
    expect(await metricValue(h, 'timer_retries_total')).toBe(0);
    const dead = await eventually('the dead letter', async () => (await h.deadLetters())[0]);
    expect(dead.properties['x-timer-reason']).toBe('not retryable');
  });
});
