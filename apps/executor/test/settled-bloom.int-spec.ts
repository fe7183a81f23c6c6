/**
 * The settled fires' bloom filter (TIMER_EXECUTOR_BLOOM=true) in the executor against real MariaDB,
 * Redis and Pulsar: settled fires are added to their minute's filter, a recheck of a settled fire is
 * dropped after a plain read, and a recheck the filter has not seen is claimed and delivered.
 */
import { lastValueFrom } from 'rxjs';
import { MESSAGE_PROPERTIES, TOPICS } from '@timer/contracts';
import { TaskStatus } from '@timer/dal';
import { taskMessage, taskRecord } from '@timer/fire';
import { BLOOM_MIN_FIRES, SliceBloom } from '@timer/redis';
import { eventually } from '@timer/testing';
import { harnessWithReceiver, metricValue } from './executor-harness';

jest.setTimeout(90_000);

describe('executor with the settled fires bloom filter', () => {
  const { h, receiver } = harnessWithReceiver({ TIMER_EXECUTOR_BLOOM: 'true' });
  const bloom = () => new SliceBloom(h.redis, h.prefix, { falsePositiveRate: 0.01 });
  const settled = (timerId: string, runAt: number) =>
    eventually(`fire ${timerId}-${runAt} settled`, async () => ((await h.task(timerId, runAt))?.status === TaskStatus.Succeeded ? true : undefined), 30_000);
  const recheck = (timerId: string, runAt: number) => lastValueFrom(h.client.emit(TOPICS.tasks, taskRecord(taskMessage({ timerId, runAt }, { attempt: 1 }), { [MESSAGE_PROPERTIES.recheck]: '1' })));

  it('adds a settled fire to its minute\'s filter, and drops a recheck of it after one read, without a second call', async () => {
    const timer = await h.timer({ url: receiver.url('/bloom') });
    const runAt = Date.now();
    await h.row(timer.id, runAt);
    await h.publish(timer.id, runAt);
    await settled(timer.id, runAt);
    await eventually('the fire in its filter', async () => ((await bloom().check([{ at: runAt, id: `${timer.id}-${runAt}` }]))[0] === true ? true : undefined), 10_000);
    expect((await bloom().describe(runAt))?.fires).toBeGreaterThanOrEqual(BLOOM_MIN_FIRES);
    await recheck(timer.id, runAt);
    await eventually('the recheck dropped as settled after a read', async () => ((await metricValue(h, 'timer_settled_filter_answers_total', { answer: 'settled' })) >= 1 ? true : undefined), 15_000);
    expect(await metricValue(h, 'timer_settled_filter_answers_total', { answer: 'maybe' })).toBeGreaterThanOrEqual(1);
    expect(receiver.callsTo('/bloom')).toHaveLength(1);
  });

  it('claims and delivers a recheck of a fire the filter has not seen (an open fire is never dropped)', async () => {
    const timer = await h.timer({ url: receiver.url('/open') });
    const runAt = Date.now();
    await h.row(timer.id, runAt);
    await recheck(timer.id, runAt);
    await settled(timer.id, runAt);
    expect(receiver.callsTo('/open')).toHaveLength(1);
    expect(await metricValue(h, 'timer_settled_filter_answers_total', { answer: 'not_settled' })).toBeGreaterThanOrEqual(1);
  });
});
