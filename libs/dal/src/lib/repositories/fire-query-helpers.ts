/**
 * What the fire repositories share: a fire's claim state, the key order batches lock rows in, and a
 * batch of keys with values as a derived table joined to `tasks`.
 */
import { FireRef } from '@timer/contracts';
import { DataSource } from 'typeorm';
import { TaskStatusValue } from '../entities/task.entity';
import { isId } from './query-helpers';

/** The claim-relevant columns of a fire. */
export interface FireState {
  status: TaskStatusValue;
  attempt: number;
  claimedBy: string | null;
  claimedUntil: number | null;
}

export interface StateRow {
  timer_id?: string | number;
  run_at?: string | number;
  status: number;
  attempt: number;
  claimed_by: string | null;
  claimed_until: string | number | null;
}

export function toState(r: StateRow): FireState {
  return {
    status: Number(r.status) as TaskStatusValue,
    attempt: Number(r.attempt),
    claimedBy: r.claimed_by,
    claimedUntil: r.claimed_until === null ? null : Number(r.claimed_until),
  };
}

/** The claim-relevant state of one fire, or null when it has no row (or the key is not valid). */
export async function fireState(dataSource: DataSource, key: FireRef): Promise<FireState | null> {
  if (!isId(key.timerId) || !Number.isSafeInteger(key.runAt)) return null;
  const rows = (await dataSource.query(
    'SELECT status, attempt, claimed_by, claimed_until FROM tasks WHERE timer_id = CAST(? AS UNSIGNED) AND run_at = ?',
    [key.timerId, key.runAt],
  )) as StateRow[];
  return rows[0] ? toState(rows[0]) : null;
}

export const keyOf = (k: FireRef): string => `${BigInt(k.timerId)}:${k.runAt}`;

/** Key order (numeric timer id, then run_at): the order batches lock rows in. */
export function compareKeys(a: FireRef, b: FireRef): number {
  const s = String(a.timerId);
  const t = String(b.timerId);
  // Decimal ids without leading zeros order by length, then as text: no BigInt pair per comparison
  // (a 500-row batch's sort makes ~4,500 of them, once per claim and outcome statement).
  if (s[0] !== '0' && t[0] !== '0' && /^\d+$/.test(s) && /^\d+$/.test(t)) {
    if (s.length !== t.length) return s.length - t.length;
    return s < t ? -1 : s > t ? 1 : a.runAt - b.runAt;
  }
  const x = BigInt(a.timerId);
  const y = BigInt(b.timerId);
  return x < y ? -1 : x > y ? 1 : a.runAt - b.runAt;
}

/**
 * A batch as a derived table `(SELECT ? AS timer_id, ? AS run_at, ? AS <column>... UNION ALL ...)`,
 * one row per key with its values, for joining to `tasks` on uk_timer_run_at (eq_ref per row).
 */
export function keyedValues(values: unknown[][], keys: FireRef[], columns: string[]): { sql: string; params: unknown[] } {
  const params: unknown[] = [];
  const first = ['CAST(? AS UNSIGNED) AS timer_id', '? AS run_at', ...columns.map((c) => `? AS ${c}`)].join(', ');
  const rest = ['CAST(? AS UNSIGNED)', '?', ...columns.map(() => '?')].join(', ');
  const selects = keys.map((k, i) => {
    params.push(k.timerId, k.runAt, ...values[i]);
    return `SELECT ${i === 0 ? first : rest}`;
  });
  return { sql: `(${selects.join(' UNION ALL ')})`, params };
}

/** Most rows one claim or outcome statement carries. */
export const OUTCOME_CHUNK = 500;

/** `fn` over consecutive chunks of OUTCOME_CHUNK items, one after the other; results in input order. */
export async function inChunks<T, R>(items: T[], fn: (chunk: T[]) => Promise<R[]>): Promise<R[]> {
  const out: R[] = [];
  for (let i = 0; i < items.length; i += OUTCOME_CHUNK) out.push(...(await fn(items.slice(i, i + OUTCOME_CHUNK))));
  return out;
}
