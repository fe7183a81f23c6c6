import { CATCH_UP_AFTER_MS, parseTaskPayload, TaskMessage, TOPICS } from '@timer/contracts';
import type { ClientPulsar } from '@timer/pulsar-transport';
import { of } from 'rxjs';
import { TaskPublisher } from './task-publisher';

const NOW = 1_800_000_000_000;
const task = (timerId: string, runAt: number): TaskMessage => ({ timerId, runAt, fireId: `${timerId}-${runAt}`, attempt: 1 });

function setup() {
  const sent: { topic: string; data: { data: unknown; options?: { properties?: Record<string, string> } } }[] = [];
  const prepared: string[] = [];
  const client = {
    emit: (topic: string, data: never) => (sent.push({ topic, data }), of(undefined)),
    prepare: async (topics: string[]) => void prepared.push(...topics),
  } as unknown as ClientPulsar;
  return { sent, prepared, publisher: new TaskPublisher(client, { now: () => NOW }) };
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
