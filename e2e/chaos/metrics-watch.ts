import { metricBy, MetricSample, Role, scrapeMetrics, Stack } from '../support';

/**
 * Keeps the last /metrics of every process of some roles, scraped every few seconds, so that
 * counters of processes killed later still count (up to their last scrape).
 */
export class MetricsWatch {
  private readonly last = new Map<string, { role: Role; samples: MetricSample[] }>();
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly stack: Stack,
    private readonly roles: readonly Role[],
  ) {}

  start(everyMs = 5000): void {
    const tick = () => {
      this.timer = setTimeout(() => void this.scrape().finally(() => this.timer && tick()), everyMs);
    };
    tick();
  }

  stop(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
  }

  async scrape(): Promise<void> {
    for (const role of this.roles) {
      for (const m of this.stack.members(role)) {
        if (!m.running) continue;
        const samples = await scrapeMetrics(m.port);
        if (samples) this.last.set(`${role}:${m.pid}`, { role, samples });
      }
    }
  }

  /** A counter summed over every process of the role that ever answered, by the value of `label`. */
  total(role: Role, name: string, label: string): Record<string, number> {
    const out: Record<string, number> = {};
    for (const v of this.last.values()) {
      if (v.role !== role) continue;
      for (const [k, n] of Object.entries(metricBy(v.samples, name, label))) out[k] = (out[k] ?? 0) + n;
    }
    return out;
  }

  /** A gauge as each running process of the role reports it now (`#<index>`: value, undefined when it does not answer). */
  async current(role: Role, name: string): Promise<Record<string, number | undefined>> {
    const out: Record<string, number | undefined> = {};
    for (const m of this.stack.members(role)) {
      const samples = m.running ? await scrapeMetrics(m.port) : undefined;
      out[`#${m.index}`] = samples?.find((s) => s.name === name)?.value;
    }
    return out;
  }
}
