import { Registry } from 'prom-client';
import type { ClaimResult, FireClaimRepository, FireClaimRequest } from '@timer/dal';
import type { MetricsService } from '@timer/platform';
import { FakeClock } from '../../test/fakes';
import { ExecutorConfig } from '../config/executor.env';
import { DeliveryControlMetrics } from '../delivery-control/delivery-control.metrics';
import { DeliveryControl } from '../delivery-control/delivery-control.service';
import { ClaimBatcher } from './claim-batcher.service';
import { ExecutorMetrics } from './executor.metrics';

const T0 = Date.UTC(2030, 0, 1, 12);

function setup() {
  const statements: string[][] = [];
  const claims = {
    claimMany: async (cs: FireClaimRequest[]): Promise<ClaimResult[]> => {
      statements.push(cs.map((c) => c.timerId));
      return cs.map(() => ({ claimed: true }));
    },
  } as unknown as FireClaimRepository;
  const clock = new FakeClock(T0);
  const config = ExecutorConfig.load({ TIMER_EXECUTOR_CONCURRENCY: '10' });
  const control = new DeliveryControl(config, new DeliveryControlMetrics({ registry: new Registry() } as MetricsService), clock);
  const batcher = new ClaimBatcher(claims, new ExecutorMetrics({ registry: new Registry() } as MetricsService), clock, control);
  const request = (timerId: string): FireClaimRequest => ({ timerId, runAt: T0, attempt: 1, token: `t${timerId}`, nowMs: T0, leaseMs: 60_000 });
  return { statements, control, batcher, request };
}

describe('ClaimBatcher', () => {
  it("claims the fires of apps not heavy first, in a statement of their own, when a heavy app's claims wait too", async () => {
    const s = setup();
    // Two apps active: a share of 5 each; 'slow' holds 4 (heavy: more than half), 'fast' 1.
    for (let i = 0; i < 4; i++) s.control.shares.tryHold('slow', T0);
    s.control.shares.tryHold('fast', T0);
    const claimed = await Promise.all([
      s.batcher.claim(s.request('a1'), 'slow'),
      s.batcher.claim(s.request('a2'), 'slow'),
      s.batcher.claim(s.request('b1'), 'fast'),
      s.batcher.claim(s.request('a3'), 'slow'),
      s.batcher.claim(s.request('b2'), 'fast'),
      s.batcher.claim(s.request('x1')), // app unknown: never held back
    ]);
    expect(claimed.every((c) => c.claimed)).toBe(true);
    expect(s.statements).toEqual([
      ['b1', 'b2', 'x1'],
      ['a1', 'a2', 'a3'],
    ]);
  });

  it("keeps one app's claims in arrival order and in one statement, heavy or not (alone, it is held back for nobody)", async () => {
    const s = setup();
    for (let i = 0; i < 8; i++) s.control.shares.tryHold('slow', T0);
    await Promise.all(['a1', 'a2', 'a3'].map((id) => s.batcher.claim(s.request(id), 'slow')));
    expect(s.statements).toEqual([['a1', 'a2', 'a3']]);
  });
});
