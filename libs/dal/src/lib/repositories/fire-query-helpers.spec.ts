import { compareKeys } from './fire-query-helpers';

describe('compareKeys', () => {
  it('orders keys by numeric timer id, then run_at, as BigInt comparison does (leading zeros included)', () => {
    const ids = ['9', '10', '2', '18446744073709551615', '18446744073709551614', '100', '007', '0', '99999999999999999999'];
    const keys = ids.flatMap((timerId) => [{ timerId, runAt: 2_000 }, { timerId, runAt: 1_000 }]);
    const byBigInt = [...keys].sort((a, b) => {
      const x = BigInt(a.timerId);
      const y = BigInt(b.timerId);
      return x < y ? -1 : x > y ? 1 : a.runAt - b.runAt;
    });
    expect([...keys].sort(compareKeys)).toEqual(byBigInt);
  });
});
