import { MESSAGE_PROPERTIES, parseTaskPayload, TaskMessage, TOPICS } from '@timer/contracts';
import type { ClientPulsar, PulsarRecord } from '@timer/pulsar-transport';
import { Observable, of, throwError } from 'rxjs';
import { FirePublisher, HAND_BACK_BATCH_MAX, HAND_BACK_MARK_SLACK_MS, HandBackMarks } from './fire-publisher';

const T0 = Date.UTC(2030, 0, 1, 12);
const fire = (timerId: string, runAt = T0): TaskMessage => ({ timerId, runAt, fireId: `${timerId}-${runAt}`, attempt: 1 });

function setup(fail = false, failMarks = false) {
  const sent: { topic: string; record: PulsarRecord }[] = [];
  const emit = (topic: string, record: PulsarRecord): Observable<undefined> => {
    sent.push({ topic, record });
    return fail ? throwError(() => new Error('broker down')) : of(undefined);
  };
  const marked: { ids: readonly string[]; ttlMs: number }[] = [];
  const marks: HandBackMarks = {
    handedBack: async (ids, ttlMs) => {
      if (failMarks) throw new Error('redis down (injected)');
      marked.push({ ids, ttlMs });
    },
  };
  const publisher = new FirePublisher({ emit } as unknown as ClientPulsar, marks, { now: () => T0 });
  const firesOf = (i: number) => {
    const parsed = parseTaskPayload(sent[i].record.data);
    return parsed.ok ? parsed.value : [];
  };
  return { sent, publisher, firesOf, marked };
}

describe('FirePublisher.handBack', () => {
  it('sends the hand-backs of one turn with the same count and second of return as one message, back at the latest time asked', async () => {
    const { sent, publisher, firesOf } = setup();
    const fires = [fire('1'), fire('2'), fire('3')];
    await Promise.all([publisher.handBack(fires[0], T0 + 1_000, 1), publisher.handBack(fires[1], T0 + 1_400, 1), publisher.handBack(fires[2], T0 + 1_200, 1)]);
    expect(sent).toHaveLength(1);
    expect(sent[0].topic).toBe(TOPICS.retries);
    expect(firesOf(0)).toEqual(fires);
    expect(sent[0].record.options).toMatchObject({
      key: '1',
      deliverAt: T0 + 1_400,
      properties: { [MESSAGE_PROPERTIES.deferrals]: '1', [MESSAGE_PROPERTIES.fireCount]: '3', [MESSAGE_PROPERTIES.firstFireId]: `1-${T0}`, [MESSAGE_PROPERTIES.lastFireId]: `3-${T0}` },
    });
  });

  it('keeps apart fires of different hand-back counts or seconds of return, and sends a lone fire in the plain form', async () => {
    const { sent, publisher } = setup();
    await Promise.all([publisher.handBack(fire('1'), T0 + 1_000, 1), publisher.handBack(fire('2'), T0 + 1_000, 2), publisher.handBack(fire('3'), T0 + 2_000, 1)]);
    expect(sent).toHaveLength(3);
    expect(sent.map((s) => s.record.data)).toEqual([fire('1'), fire('2'), fire('3')]);
    expect(sent.map((s) => s.record.options?.properties)).toEqual([
      { [MESSAGE_PROPERTIES.fireId]: `1-${T0}`, [MESSAGE_PROPERTIES.deferrals]: '1' },
      { [MESSAGE_PROPERTIES.fireId]: `2-${T0}`, [MESSAGE_PROPERTIES.deferrals]: '2' },
      { [MESSAGE_PROPERTIES.fireId]: `3-${T0}`, [MESSAGE_PROPERTIES.deferrals]: '1' },
    ]);
  });

  it(`splits a turn's hand-backs at ${HAND_BACK_BATCH_MAX} fires a message, and a later turn's go in a new message`, async () => {
    const { sent, publisher, firesOf } = setup();
    const many = Array.from({ length: HAND_BACK_BATCH_MAX + 5 }, (_, i) => fire(String(i + 1)));
    await Promise.all(many.map((f) => publisher.handBack(f, T0 + 1_000, 1)));
    expect(sent).toHaveLength(2);
    expect([...firesOf(0), ...firesOf(1)]).toEqual(many);
    await publisher.handBack(fire('999'), T0 + 1_000, 1);
    expect(sent).toHaveLength(3);
  });

  it('rejects every hand-back of a message the broker did not take, so their task messages are nacked, and marks none of them', async () => {
    const { publisher, marked } = setup(true);
    const results = await Promise.allSettled([publisher.handBack(fire('1'), T0, 1), publisher.handBack(fire('2'), T0, 1)]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    await new Promise((r) => setImmediate(r));
    expect(marked).toEqual([]);
  });

  it("marks a stored hand-back's fires as waiting in the broker until its return plus the slack, one Redis call a message", async () => {
    const { publisher, marked } = setup();
    await Promise.all([publisher.handBack(fire('1'), T0 + 1_000, 1), publisher.handBack(fire('2'), T0 + 1_400, 1), publisher.handBack(fire('3'), T0 + 5_000, 2)]);
    expect(marked).toEqual([
      { ids: [`1-${T0}`, `2-${T0}`], ttlMs: 1_400 + HAND_BACK_MARK_SLACK_MS },
      { ids: [`3-${T0}`], ttlMs: 5_000 + HAND_BACK_MARK_SLACK_MS },
    ]);
  });

  it('resolves a stored hand-back even when its mark cannot be written (the reconciler may then re-send it once)', async () => {
    const { publisher, marked } = setup(false, true);
    await expect(publisher.handBack(fire('1'), T0 + 1_000, 1)).resolves.toBeUndefined();
    expect(marked).toEqual([]);
  });
});
