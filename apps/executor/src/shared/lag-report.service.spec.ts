import { Registry } from 'prom-client';
import { MetricsService } from '@timer/platform';
import { ExecutorMetrics } from './executor.metrics';
import { LagReport, quantileMs } from './lag-report.service';

describe('quantileMs', () => {
  const bounds = [0.1, 0.5, 1, 5];

  it('interpolates inside the bucket that holds the rank', () => {
    // 10 observations: 5 up to 100 ms, 5 in (0.5, 1] s: the 90th is 4/5 into (0.5, 1].
    expect(quantileMs(bounds, [5, 0, 5, 0], 10, 0.9)).toBeCloseTo(900);
    expect(quantileMs(bounds, [10, 0, 0, 0], 10, 0.9)).toBeCloseTo(90);
  });

  it('is 0 without observations and the largest bound beyond it', () => {
    expect(quantileMs(bounds, [0, 0, 0, 0], 0, 0.9)).toBe(0);
    expect(quantileMs(bounds, [1, 0, 0, 0], 10, 0.9)).toBe(5000);
  });
});

describe('LagReport', () => {
  it('reports the lateness of the calls since its previous report, then 0 while nothing is called', () => {
    const metrics = new ExecutorMetrics({ registry: new Registry() } as MetricsService);
    const report = new LagReport({} as never, 'p:', metrics, { now: () => 0 });
    for (let i = 0; i < 100; i++) metrics.lateness.observe(i < 50 ? 0.02 : 20);
    expect(report.currentLagMs()).toBeGreaterThan(10_000);
    expect(report.currentLagMs()).toBe(0);
    metrics.lateness.observe(0.003);
    expect(report.currentLagMs()).toBeLessThan(5);
    // A reset of the registry starts over instead of counting negative observations.
    metrics.lateness.reset();
    metrics.lateness.observe(2);
    expect(report.currentLagMs()).toBeGreaterThan(1000);
  });
});
