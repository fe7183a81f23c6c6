import { Registry } from 'prom-client';
import type { MetricsService } from '@timer/platform';
import { CALL_MARKS_CHUNK, type CallMarks } from '@timer/redis';
import { FakeCallMarks, FakeLiveness } from '../../test/fakes';
import { ExecutorConfig } from '../config/executor.env';
import { CallStarts } from './call-starts.service';
import { ExecutorMetrics } from '../shared/executor.metrics';
import type { ExecutorLiveness } from './executor-liveness.service';

function setup() {
  const marks = new FakeCallMarks();
  const metrics = new ExecutorMetrics({ registry: new Registry() } as MetricsService);
  const calls = new CallStarts(marks as unknown as CallMarks, new FakeLiveness() as unknown as ExecutorLiveness, ExecutorConfig.load({}), metrics);
  const spy = jest.spyOn(marks, 'markMany');
  return { marks, metrics, calls, spy };
}

async function takeovers(metrics: ExecutorMetrics, call: string): Promise<number> {
  const { values } = await metrics.takeovers.get();
  return values.find((v) => v.labels.call === call)?.value ?? 0;
}

/** Lets the fire-and-forget open of a chunk land. */
const settle = () => new Promise((r) => setImmediate(r));

describe('CallStarts', () => {
  it('opens a chunk with its first claim token, before any of its claims can be marked', async () => {
    const s = setup();
    expect(s.calls.nextToken()).toBe('exec-a:0');
    await settle();
    expect(s.marks.chunks.get('exec-a:0')?.open).toBe(true);
    expect(s.marks.chunks.has('exec-a:1')).toBe(false);
  });

  it('marks the calls of one event-loop turn in one script call, and says go', async () => {
    const s = setup();
    const tokens = [s.calls.nextToken(), s.calls.nextToken(), s.calls.nextToken()];
    await expect(Promise.all(tokens.map((t) => s.calls.beforeCall(t)))).resolves.toEqual([true, true, true]);
    expect(s.spy).toHaveBeenCalledTimes(1);
    expect(tokens.every((t) => s.marks.called(t))).toBe(true);
  });

  it('refuses the call of a claim that was taken over before its mark (this process was taken for dead)', async () => {
    const s = setup();
    const mine = s.calls.nextToken();
    await settle();
    await s.marks.takeOver('exec-a', 0, 0);
    expect(await s.calls.beforeCall(mine)).toBe(false);
  });

  it('tells a dead holder\'s claim that never called from one that did, and fences both off', async () => {
    const s = setup();
    await s.marks.open('exec-b', 0);
    await s.marks.markMany('exec-b', 0, [5]);
    const own1 = s.calls.nextToken();
    const own2 = s.calls.nextToken();
    expect(await s.calls.takenOver('exec-b:4', own1)).toBe(false);
    expect(s.marks.called(own1)).toBe(false);
    expect(await s.calls.takenOver('exec-b:5', own2)).toBe(true);
    // Carried on: should this process die before its own call, its taker flags the fire too.
    expect(s.marks.called(own2)).toBe(true);
    // The dead holder, were it only paused, can no longer start either call.
    await expect(s.marks.markMany('exec-b', 0, [4, 5])).resolves.toEqual([false, false]);
    expect(await takeovers(s.metrics, 'not_called')).toBe(1);
    expect(await takeovers(s.metrics, 'called')).toBe(1);
  });

  it('hands out claims from a new chunk once the current one is gone from Redis (flushed)', async () => {
    const s = setup();
    s.calls.nextToken();
    await settle();
    s.marks.chunks.clear();
    await s.calls.beat();
    expect(s.calls.nextToken()).toBe(`exec-a:${CALL_MARKS_CHUNK}`);
  });

  it('does not judge a chunk gone while its opening is still on its way', async () => {
    const s = setup();
    let opened: () => void = () => undefined;
    jest.spyOn(s.marks, 'open').mockImplementationOnce((p, c) => new Promise<void>((r) => (opened = () => void s.marks.open(p, c).then(r))));
    s.calls.nextToken();
    await s.calls.beat();
    expect(s.calls.nextToken()).toBe('exec-a:1');
    opened();
    await settle();
  });

  it('counts a claim as called when nothing proves otherwise: chunk not open, a foreign token, Redis down', async () => {
    const s = setup();
    const own = s.calls.nextToken();
    expect(await s.calls.takenOver('exec-b:7', own)).toBe(true); // exec-b never opened chunk 0 (or it was flushed)
    expect(await s.calls.takenOver('dead-executor', own)).toBe(true);
    s.marks.fail = true;
    expect(await s.calls.takenOver('exec-b:8', own)).toBe(true);
    expect(await takeovers(s.metrics, 'unknown')).toBe(3);
  });

  it('lets the call go out when its mark fails, closes the chunk and hands out claims from a new one', async () => {
    const s = setup();
    const token = s.calls.nextToken();
    await settle();
    s.marks.fail = true;
    expect(await s.calls.beforeCall(token)).toBe(true);
    s.marks.fail = false;
    expect(s.calls.nextToken()).toBe(`exec-a:${CALL_MARKS_CHUNK}`);
    await s.calls.beat();
    expect(s.marks.chunks.get('exec-a:0')?.open).toBe(false);
    expect(s.marks.chunks.get('exec-a:1')?.open).toBe(true);
    expect(await s.marks.takeOver('exec-a', 0, 1)).toBe('unknown');
  });
});
