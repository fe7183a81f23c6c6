import type { Metric, Registry } from 'prom-client';

/** One series of a histogram as prom-client's registry reads it. */
interface Series {
  labels: Record<string, string | number>;
  value: number;
  metricName: string;
  exemplar?: null;
}

export interface BucketHistogramOptions {
  name: string;
  help: string;
  /** Upper bounds, ascending; `+Inf` is implied. */
  buckets: readonly number[];
  registers: Registry[];
}

/**
 * An unlabelled histogram for values observed once or more per fire, exported exactly as prom-client's
 * `Histogram` (same series, order and aggregator). prom-client's `observe` builds a closure and a
 * labels object, hashes them, and looks its bucket up by the bound's decimal text, many times this
 * one's cost, paid twice per fire by the executor (docs/benchmarks.md, "Measurements behind the code").
 * Here: a bucket index.
 */
export class BucketHistogram {
  readonly name: string;
  readonly help: string;
  readonly type = 'histogram' as const;
  readonly aggregator = 'sum' as const;
  private readonly bounds: readonly number[];
  private counts: Float64Array;
  private sum = 0;
  private count = 0;
  /** Whether the series exist: from the start, and after a reset once observed again (as prom-client). */
  private exported = true;

  constructor(options: BucketHistogramOptions) {
    if (options.buckets.some((b, i) => !Number.isFinite(b) || (i > 0 && b <= options.buckets[i - 1]))) {
      throw new RangeError(`${options.name}: buckets must be finite and ascending`);
    }
    this.name = options.name;
    this.help = options.help;
    this.bounds = [...options.buckets];
    this.counts = new Float64Array(this.bounds.length);
    // The registry reads `name` and calls `get()` and `reset()`: the members of prom-client's Metric it uses.
    for (const registry of options.registers) registry.registerMetric(this as unknown as Metric);
  }

  observe(value: number): void {
    if (!Number.isFinite(value)) throw new TypeError(`Value is not a valid number: ${value}`);
    const bounds = this.bounds;
    for (let i = 0; i < bounds.length; i++) {
      if (value <= bounds[i]) {
        this.counts[i]++;
        break;
      }
    }
    this.sum += value;
    this.count++;
    this.exported = true;
  }

  /** The upper bounds and the observations so far: per bucket (not cumulative), then in all (`+Inf` included). */
  snapshot(): { bounds: readonly number[]; counts: number[]; count: number } {
    return { bounds: this.bounds, counts: Array.from(this.counts), count: this.count };
  }

  reset(): void {
    this.counts = new Float64Array(this.bounds.length);
    this.sum = 0;
    this.count = 0;
    this.exported = false;
  }

  async get(): Promise<{ name: string; help: string; type: 'histogram'; values: Series[]; aggregator: 'sum' }> {
    const bucket = `${this.name}_bucket`;
    const values: Series[] = [];
    if (!this.exported) return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
    let cumulative = 0;
    this.bounds.forEach((le, i) => {
      cumulative += this.counts[i];
      values.push({ labels: { le }, value: cumulative, metricName: bucket, exemplar: null });
    });
    values.push({ labels: { le: '+Inf' }, value: this.count, metricName: bucket, exemplar: null });
    values.push({ labels: {}, value: this.sum, metricName: `${this.name}_sum` });
    values.push({ labels: {}, value: this.count, metricName: `${this.name}_count` });
    return { name: this.name, help: this.help, type: this.type, values, aggregator: this.aggregator };
  }
}
