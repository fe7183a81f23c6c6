import { Delivery, percentiles, Percentiles } from '../support';
import { Fault } from './faults';

/** A fire's row as the chaos run reads it back (status: 0 pending, 1 running, 2 succeeded, 3 failed, 4 missed). */
export interface FireRow {
  fireId: string;
  status: number;
  error: string | null;
}

/** How long after a fault ended its fires still count as its own. */
export const AFTER_FAULT_MS = 10_000;

/** One duplicate delivery: a delivery of a fire after an earlier one had reached the receiver. */
export interface Duplicate {
  fireId: string;
  receivedAt: number;
  /** It carried X-Timer-Redelivery: 1. */
  flagged: boolean;
  /** An earlier delivery of the fire was answered 2xx (the service could have known); else all earlier ones were aborted. */
  afterAnswered: boolean;
  /** How long after the fire's first delivery it came (ms). */
  gapMs: number;
  /** The fault whose window (from 5 s before it until AFTER_FAULT_MS after it ended) holds the fire's first delivery, or `none`. */
  fault: string;
}

export interface ChaosAccount {
  expected: number;
  delivered: number;
  /** Not delivered, recorded missed or failed, by error. */
  recorded: Record<string, number>;
  /** Not delivered and still pending or running. */
  stranded: string[];
  /** Not delivered, not recorded: no row, or a row that says succeeded while the receiver never answered. */
  lost: string[];
  duplicates: Duplicate[];
  early: number;
  /**
   * Per fire that reached the receiver: its scheduled time, the lateness of its first delivery
   * (receive - scheduled) and of its first answered one (they differ when the first was aborted).
   */
  firstDelivery: Map<string, { scheduledAt: number; lateMs: number; answeredLateMs?: number }>;
  /** The run times of the fires that never reached the receiver. */
  neverReached: number[];
}

/**
 * Fire by fire: every expected fire id against the receiver's deliveries and the fire's row. A fire
 * counts as delivered once a delivery of it was answered 2xx; lateness is that of its first delivery
 * (answered or not: it reached the receiver).
 */
export function accountChaos(expected: string[], deliveries: Delivery[], rows: Map<string, FireRow>, faults: Fault[]): ChaosAccount {
  const want = new Set(expected);
  const byFire = new Map<string, Delivery[]>();
  for (const d of deliveries) {
    if (!want.has(d.fireId)) continue;
    const list = byFire.get(d.fireId);
    if (list) list.push(d);
    else byFire.set(d.fireId, [d]);
  }
  const a: ChaosAccount = { expected: want.size, delivered: 0, recorded: {}, stranded: [], lost: [], duplicates: [], early: 0, firstDelivery: new Map(), neverReached: [] };
  for (const id of want) {
    const list = (byFire.get(id) ?? []).sort((x, y) => x.receivedAt - y.receivedAt);
    if (list.some(answered)) {
      a.delivered++;
    } else {
      const row = rows.get(id);
      if (row && (row.status === 0 || row.status === 1)) a.stranded.push(id);
      else if (row && (row.status === 3 || row.status === 4)) {
        const why = `${row.status === 3 ? 'failed' : 'missed'}: ${(row.error ?? '').replace(/\d+/g, 'N')}`;
        a.recorded[why] = (a.recorded[why] ?? 0) + 1;
      } else a.lost.push(id);
    }
    if (list.length === 0) {
      a.neverReached.push(Number(id.slice(id.lastIndexOf('-') + 1)));
      continue;
    }
    const ok = list.find(answered);
    a.firstDelivery.set(id, { scheduledAt: list[0].scheduledAt, lateMs: list[0].receivedAt - list[0].scheduledAt, answeredLateMs: ok && ok.receivedAt - ok.scheduledAt });
    if (list[0].receivedAt < list[0].scheduledAt) a.early++;
    for (let i = 1; i < list.length; i++) {
      a.duplicates.push({
        fireId: id,
        receivedAt: list[i].receivedAt,
        flagged: list[i].redelivery,
        afterAnswered: list.slice(0, i).some(answered),
        gapMs: list[i].receivedAt - list[0].receivedAt,
        fault: faultAround(faults, list[0].receivedAt),
      });
    }
  }
  return a;
}

const answered = (d: Delivery) => !d.aborted && d.status >= 200 && d.status < 300;

function faultAround(faults: Fault[], at: number): string {
  const f = faults.filter((x) => at >= x.start - 5000 && at < x.end + AFTER_FAULT_MS).pop();
  return f ? f.kind : 'none';
}

/**
 * Lateness of the first deliveries of the fires scheduled inside any of the windows [from, to), the
 * largest lateness of their first answered deliveries, and how many fires never reached the receiver.
 */
export function latenessIn(a: ChaosAccount, windows: [number, number][]): { fires: number; neverReached: number; late: Percentiles; answeredMaxMs: number } {
  const inside = (t: number) => windows.some(([from, to]) => t >= from && t < to);
  const values: number[] = [];
  let answeredMaxMs = NaN;
  for (const f of a.firstDelivery.values()) {
    if (!inside(f.scheduledAt)) continue;
    values.push(f.lateMs);
    if (f.answeredLateMs !== undefined && !(f.answeredLateMs <= answeredMaxMs)) answeredMaxMs = f.answeredLateMs;
  }
  return { fires: values.length, neverReached: a.neverReached.filter(inside).length, late: percentiles(values), answeredMaxMs };
}

/** The window that counts as a fault's: from its start until AFTER_FAULT_MS after it ended. */
export const faultWindow = (f: Fault): [number, number] => [f.start, f.end + AFTER_FAULT_MS];

/** A fire later than this counts as late when judging whether delivery is on time again after a restart. */
export const ON_TIME_MS = 1_000;

/**
 * How long after `end` (a server back from its restart) fires were still late: the latest scheduled
 * time, relative to `end`, of a fire due in [end, end + AFTER_FAULT_MS) whose first delivery came more
 * than {@link ON_TIME_MS} late; 0 when none was.
 */
export function lateAfter(a: ChaosAccount, end: number): number {
  let last = 0;
  for (const f of a.firstDelivery.values()) {
    if (f.scheduledAt >= end && f.scheduledAt < end + AFTER_FAULT_MS && f.lateMs > ON_TIME_MS) last = Math.max(last, f.scheduledAt - end);
  }
  return last;
}
