import type { FireClaimRepository } from '@timer/dal';
import { TaskStatus } from '@timer/dal';
import type { SliceBloom, SliceIndex, SliceItem } from '@timer/redis';
import { SettledFires } from './settled-fires.service';

const T0 = 1_700_000_040_000;

function setup(on = true) {
  const calls = { checks: [] as SliceItem[][], adds: [] as SliceItem[][], sized: [] as number[], stateMany: 0 };
  const bloom = {
    check: async (items: SliceItem[]) => {
      calls.checks.push(items);
      return items.map((it) => (it.id.startsWith('1-') ? true : false));
    },
    add: async (items: SliceItem[], firesOf: (m: number) => Promise<number>) => {
      calls.adds.push(items);
      await Promise.all([...new Set(items.map((it) => Math.floor(it.at / 60_000) * 60_000))].map(firesOf));
      return items.length;
    },
    indexedFires: async (_: SliceIndex, minute: number) => {
      calls.sized.push(minute);
      return 5_000;
    },
  } as unknown as SliceBloom;
  const claims = {
    stateMany: async (ks: { timerId: string }[]) => {
      calls.stateMany++;
      return ks.map((k) => (k.timerId === '1' ? { status: TaskStatus.Succeeded, attempt: 1, claimedBy: null, claimedUntil: null } : null));
    },
  } as unknown as FireClaimRepository;
  return { calls, settled: new SettledFires(claims, on ? bloom : null, {} as SliceIndex) };
}

describe('SettledFires', () => {
  it('asks the filter once for the checks of one event-loop turn, and answers each', async () => {
    const s = setup();
    const answers = await Promise.all([s.settled.screen({ timerId: '1', runAt: T0 }), s.settled.screen({ timerId: '2', runAt: T0 }), s.settled.screen({ timerId: '1', runAt: T0 + 60_000 })]);
    expect(answers).toEqual(['maybe', 'not-settled', 'maybe']);
    expect(s.calls.checks).toHaveLength(1);
    expect(s.calls.checks[0].map((i) => i.id)).toEqual([`1-${T0}`, `2-${T0}`, `1-${T0 + 60_000}`]);
  });

  it('reads the rows of one turn in one query', async () => {
    const s = setup();
    const states = await Promise.all([s.settled.state({ timerId: '1', runAt: T0 }), s.settled.state({ timerId: '2', runAt: T0 })]);
    expect(states.map((x) => x?.status ?? null)).toEqual([TaskStatus.Succeeded, null]);
    expect(s.calls.stateMany).toBe(1);
  });

  it('adds a batch in one call, and reads a slice\'s fire count once per process', async () => {
    const s = setup();
    s.settled.mark([{ timerId: '1', runAt: T0 }, { timerId: '2', runAt: T0 + 1 }]);
    s.settled.mark([{ timerId: '3', runAt: T0 + 2 }]);
    await new Promise((r) => setImmediate(r));
    expect(s.calls.adds.map((a) => a.length)).toEqual([2, 1]);
    expect(s.calls.sized).toEqual([T0]);
  });

  it('off: answers unknown without Redis and adds nothing', async () => {
    const s = setup(false);
    expect(s.settled.screening).toBe(false);
    expect(await s.settled.screen({ timerId: '1', runAt: T0 })).toBe('unknown');
    s.settled.mark([{ timerId: '1', runAt: T0 }]);
    expect(s.calls.adds).toHaveLength(0);
    expect(s.calls.checks).toHaveLength(0);
  });
});
