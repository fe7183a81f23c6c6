import { FIRE_STATUS_CHOICES, FIRE_STATUS_VALUES, FIRE_STATUSES, FireStatus } from './fire-status';

describe('the fire status vocabulary', () => {
  it('names each number once, in order, as FireStatus does', () => {
    expect(FIRE_STATUS_VALUES).toEqual([0, 1, 2, 3, 4]);
    expect(Object.entries(FireStatus).map(([k, v]) => [k.toLowerCase(), v])).toEqual(FIRE_STATUSES.map((s) => [s.name, s.value]));
    expect(FIRE_STATUSES.every((s) => s.meaning.length > 0)).toBe(true);
  });

  it('lists the choices as the api names them in a refusal', () => {
    expect(FIRE_STATUS_CHOICES).toBe('0 (pending), 1 (running), 2 (succeeded), 3 (failed), 4 (missed)');
  });
});
