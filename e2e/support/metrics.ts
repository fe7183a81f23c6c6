/** One sample of a Prometheus text exposition: `name{label="value",...} number`. */
export interface MetricSample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const SAMPLE = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)/;
const LABEL = /(\w+)="((?:[^"\\]|\\.)*)"/g;

/** The samples of a role process's `/metrics`; undefined when it does not answer (e.g. it is down). */
export async function scrapeMetrics(port: number, timeoutMs = 3000): Promise<MetricSample[] | undefined> {
  const res = await fetch(`http://127.0.0.1:${port}/metrics`, { signal: AbortSignal.timeout(timeoutMs) }).catch(() => undefined);
  if (!res?.ok) return undefined;
  const out: MetricSample[] = [];
  for (const line of (await res.text()).split('\n')) {
    const m = SAMPLE.exec(line);
    if (!m) continue;
    const labels: Record<string, string> = {};
    for (const [, k, v] of (m[2] ?? '').matchAll(LABEL)) labels[k] = v;
    out.push({ name: m[1], labels, value: Number(m[3]) });
  }
  return out;
}

/** The samples named `name`, keyed by the value of `label` (summed per key); `{}` when there is none. */
export function metricBy(samples: MetricSample[], name: string, label: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const s of samples) if (s.name === name) out[s.labels[label] ?? ''] = (out[s.labels[label] ?? ''] ?? 0) + s.value;
  return out;
}
