import { fireId, TOPICS, TOPOLOGY } from '../index';

describe('contracts', () => {
  it('builds the fire id of the callback header contract: <timerId>-<runAtMs>', () => {
    expect(fireId('42', 1_763_800_000_000)).toBe('42-1763800000000');
  });

  it('keeps topic names unique and valid Pulsar local names', () => {
    const names = Object.values(TOPICS);
    expect(new Set(names).size).toBe(names.length);
    for (const n of names) expect(n).toMatch(/^[a-z0-9-]+$/);
  });

  it('names a subscription for every topic, so no message is published into no subscription', () => {
    expect(Object.keys(TOPOLOGY).sort()).toEqual(Object.values(TOPICS).sort());
    for (const subs of Object.values(TOPOLOGY)) expect(subs.length).toBeGreaterThan(0);
  });
});
