import { Histogram, Registry } from 'prom-client';
import { BucketHistogram } from './bucket-histogram';

const BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];
const VALUES = [0, 0.005, 0.0051, 0.01, 0.3, 1, 2.5, 59.9, 60, 60.001, 1e6, 0.02, 0.02];

function registries(): { stock: Registry; ours: Registry } {
  const stock = new Registry();
  const ours = new Registry();
  for (const r of [stock, ours]) r.setDefaultLabels({ role: 'executor' });
  return { stock, ours };
}

describe('BucketHistogram', () => {
  it("exports what prom-client's Histogram exports for the same observations", async () => {
    const { stock, ours } = registries();
    const a = new Histogram({ name: 'timer_test_seconds', help: 'A test histogram', buckets: BUCKETS, registers: [stock] });
    const b = new BucketHistogram({ name: 'timer_test_seconds', help: 'A test histogram', buckets: BUCKETS, registers: [ours] });
    for (const v of VALUES) {
      a.observe(v);
      b.observe(v);
    }
    expect(await ours.metrics()).toBe(await stock.metrics());
    expect(await ours.getMetricsAsJSON()).toEqual(await stock.getMetricsAsJSON());
  });

  it('exports zeros before any observation and after a reset, as prom-client does', async () => {
    const { stock, ours } = registries();
    const a = new Histogram({ name: 'timer_test_seconds', help: 'h', buckets: [1, 2], registers: [stock] });
    const b = new BucketHistogram({ name: 'timer_test_seconds', help: 'h', buckets: [1, 2], registers: [ours] });
    expect(await ours.metrics()).toBe(await stock.metrics());
    a.observe(1.5);
    b.observe(1.5);
    stock.resetMetrics();
    ours.resetMetrics();
    expect(await ours.metrics()).toBe(await stock.metrics());
  });

  it('refuses a value that is not a finite number, as prom-client does', () => {
    const b = new BucketHistogram({ name: 'timer_test_seconds', help: 'h', buckets: [1], registers: [] });
    expect(() => b.observe(Number.NaN)).toThrow(TypeError);
    expect(() => b.observe(Number.POSITIVE_INFINITY)).toThrow(TypeError);
  });

  it('snapshots its counts per bucket and in all, as copies', () => {
    const b = new BucketHistogram({ name: 'timer_test_seconds', help: 'h', buckets: [1, 2], registers: [] });
    for (const v of [0.5, 1, 1.5, 3]) b.observe(v);
    const first = b.snapshot();
    expect(first).toEqual({ bounds: [1, 2], counts: [2, 1], count: 4 });
    b.observe(0.1);
    expect(first.counts).toEqual([2, 1]);
    expect(b.snapshot().counts).toEqual([3, 1]);
  });

  it('refuses buckets out of order', () => {
    expect(() => new BucketHistogram({ name: 'timer_test_seconds', help: 'h', buckets: [1, 1], registers: [] })).toThrow(RangeError);
  });
});
