import { CATCH_UP_AFTER_MS, parseTaskPayload, TaskMessage, TOPICS } from '@timer/contracts';
import type { ClientPulsar } from '@timer/pulsar-transport';
import { of, throwError } from 'rxjs';
import type { FireSpan, Tracing } from '@timer/platform';
import { TaskPublisher } from './task-publisher';

const NOW = 1_800_000_000_000;
const task = (timerId: string, runAt: number): TaskMessage => ({ timerId, runAt, fireId: `${timerId}-${runAt}`, attempt: 1 });

/** Records the spans started and ended; span n's traceparent names span id n. */
function fakeTracing() {
  const spans: { name: string; parent?: string; traceparent: string; ended: boolean; error?: string }[] = [];
  const tracing = {
    enabled: true,
    start(name: string, parent: string | undefined): FireSpan {
      const s = { name, parent, traceparent: `00-${'a'.repeat(32)}-${String(spans.length + 1).padStart(16, '0')}-01`, ended: false, error: undefined as string | undefined };
      spans.push(s);
      return { traceparent: s.traceparent, setAttribute: () => undefined, end: (error?: string) => Object.assign(s, { ended: true, error }) };
    },
  } as unknown as Tracing;
  return { spans, tracing };
}

function setup(tracing?: Tracing) {
  const sent: { topic: string; data: { data: unknown; options?: { properties?: Record<string, string> } } }[] = [];
  const prepared: string[] = [];
  const client = {
    emit: (topic: string, data: never) => (sent.push({ topic, data }), of(undefined)),
    prepare: async (topics: string[]) => void prepared.push(...topics),
  } as unknown as ClientPulsar;
  return { sent, prepared, publisher: new TaskPublisher(client, { now: () => NOW }, tracing) };
}

describe('TaskPublisher start-up', () => {
  it('opens both lanes\' producers, so a first fire does not wait for its producer', () => {
    const { prepared, publisher } = setup();
    publisher.onApplicationBootstrap();
    expect(prepared.sort()).toEqual([TOPICS.catchUp, TOPICS.tasks].sort());
  });
});

describe('TaskPublisher.publishBatch', () => {
  it('sends one message per lane: fires due now never ride the catch-up lane with late ones', async () => {
    const { sent, publisher } = setup();
    const late = [task('1', NOW - CATCH_UP_AFTER_MS - 1_000), task('2', NOW - 50_000)];
    const due = [task('3', NOW - 100), task('4', NOW + 200)];
    await publisher.publishBatch([late[0], due[0], late[1], due[1]]);
    expect(sent.map((s) => s.topic).sort()).toEqual([TOPICS.catchUp, TOPICS.tasks].sort());
    const fires = (topic: string) => {
      const parsed = parseTaskPayload(sent.find((s) => s.topic === topic)!.data.data);
      return parsed.ok ? parsed.value : [];
    };
    expect(fires(TOPICS.catchUp)).toEqual(late);
    expect(fires(TOPICS.tasks)).toEqual(due);
  });

  it('sends a lone fire in the plain form, with its fire id property', async () => {
    const { sent, publisher } = setup();
    await publisher.publishBatch([task('5', NOW)]);
    expect(sent).toHaveLength(1);
    expect(sent[0].data.data).toEqual(task('5', NOW));
    expect(sent[0].data.options?.properties?.['x-timer-fire-id']).toBe(`5-${NOW}`);
  });
});

describe('TaskPublisher with tracing on', () => {
  it('starts each fire\'s trace, carried in its payload and, for a lone fire, its traceparent property', async () => {
    const { spans, tracing } = fakeTracing();
    const { sent, publisher } = setup(tracing);
    await publisher.publish(task('5', NOW));
    await publisher.publishBatch([task('6', NOW), task('7', NOW)]);
    expect(spans.map((s) => [s.name, s.parent, s.ended])).toEqual([
      ['timer.fire.publish', undefined, true],
      ['timer.fire.publish', undefined, true],
      ['timer.fire.publish', undefined, true],
    ]);
    expect(sent[0].data.options?.properties?.traceparent).toBe(spans[0].traceparent);
    expect(sent[0].data.data).toEqual({ ...task('5', NOW), traceparent: spans[0].traceparent });
    const batch = parseTaskPayload(sent[1].data.data);
    expect(batch.ok && batch.value.map((t) => t.traceparent)).toEqual([spans[1].traceparent, spans[2].traceparent]);
  });

  it('continues a fire\'s trace it already has, and ends the span failed when the broker refused', async () => {
    const { spans, tracing } = fakeTracing();
    const { publisher } = setup(tracing);
    const parent = `00-${'b'.repeat(32)}-${'c'.repeat(16)}-01`;
    await publisher.publish({ ...task('5', NOW), traceparent: parent });
    expect(spans[0].parent).toBe(parent);
    const failing = new TaskPublisher({ emit: () => throwError(() => new Error('broker away')) } as unknown as ClientPulsar, { now: () => NOW }, tracing);
    await expect(failing.publish(task('6', NOW))).rejects.toThrow('broker away');
    expect(spans[1]).toMatchObject({ ended: true, error: 'broker away' });
  });
});
