import type { Delivery } from './receiver';

/** Nearest-rank percentile of an ascending array (NaN when empty). */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

export interface Percentiles {
  p50: number;
  p95: number;
  p99: number;
  max: number;
}

export function percentiles(values: number[]): Percentiles {
  const s = Float64Array.from(values).sort();
  return { p50: percentile(s, 50), p95: percentile(s, 95), p99: percentile(s, 99), max: s.length ? s[s.length - 1] : NaN };
}

/** The fire ids expected from one every-`periodMs` timer whose fires fall in [from, to). */
export function periodicFireIds(timerId: string, from: number, to: number, periodMs = 1000): string[] {
  const out: string[] = [];
  for (let t = Math.ceil(from / periodMs) * periodMs; t < to; t += periodMs) out.push(`${timerId}-${t}`);
  return out;
}

export interface FireAccount {
  expected: number;
  /** Expected fires with at least one answered (2xx, not aborted) delivery. */
  delivered: number;
  missing: string[];
  /** Fires with more than one answered 2xx delivery: duplicates the service should have fenced. */
  duplicates: string[];
  /** Fires delivered again after an aborted delivery (caller died mid-call): at-least-once, not a duplicate. */
  redeliveredAfterAbort: string[];
  /** Deliveries received before their X-Timer-Scheduled-At. */
  early: Delivery[];
  /** Deliveries of fires that were not expected (inside the timers, outside the set). */
  unexpected: Delivery[];
  /** First-attempt lateness (receive time - scheduled-at) of each delivered fire, ms. */
  lateness: number[];
  /** Deliveries whose fire id does not match `<X-Timer-Id>-<X-Timer-Scheduled-At>`. */
  malformed: Delivery[];
}

/**
 * Accounts the deliveries of the timers named in `expected` against the fire ids expected of them.
 * A fire counts as delivered once it got an answered 2xx; a fire answered 2xx twice is a duplicate.
 */
export function accountFires(deliveries: Delivery[], expected: Iterable<string>, timerIds: Iterable<string>): FireAccount {
  const want = new Set(expected);
  const timers = new Set(timerIds);
  const byFire = new Map<string, Delivery[]>();
  const account: FireAccount = {
    expected: want.size,
    delivered: 0,
    missing: [],
    duplicates: [],
    redeliveredAfterAbort: [],
    early: [],
    unexpected: [],
    lateness: [],
    malformed: [],
  };
  for (const d of deliveries) {
    if (!timers.has(d.timerId)) continue;
    if (d.fireId !== `${d.timerId}-${d.scheduledAt}`) account.malformed.push(d);
    if (d.receivedAt < d.scheduledAt) account.early.push(d);
    if (!want.has(d.fireId)) {
      account.unexpected.push(d);
      continue;
    }
    const list = byFire.get(d.fireId) ?? [];
    list.push(d);
    byFire.set(d.fireId, list);
  }
  for (const id of want) {
    const list = byFire.get(id) ?? [];
    const answered = list.filter((d) => !d.aborted && d.status >= 200 && d.status < 300);
    if (answered.length === 0) {
      account.missing.push(id);
      continue;
    }
    account.delivered++;
    if (answered.length > 1) account.duplicates.push(id);
    if (list.some((d) => d.aborted)) account.redeliveredAfterAbort.push(id);
    account.lateness.push(list[0].receivedAt - list[0].scheduledAt);
  }
  return account;
}

/** A short, readable summary of an account for test failure messages. */
export function describeAccount(a: FireAccount): Record<string, unknown> {
  const late = percentiles(a.lateness);
  return {
    expected: a.expected,
    delivered: a.delivered,
    missing: a.missing.slice(0, 10),
    missingCount: a.missing.length,
    duplicates: a.duplicates.slice(0, 10),
    duplicateCount: a.duplicates.length,
    redeliveredAfterAbort: a.redeliveredAfterAbort.length,
    early: a.early.slice(0, 5).map((d) => `${d.fireId} received ${d.scheduledAt - d.receivedAt} ms early`),
    unexpected: a.unexpected.length,
    malformed: a.malformed.length,
    latenessMs: late,
  };
}
