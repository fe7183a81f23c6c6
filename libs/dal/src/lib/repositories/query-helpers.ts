import type { DataSource, EntityManager } from 'typeorm';

const MAX_BIGINT_UNSIGNED = 18_446_744_073_709_551_615n;

/** True for a decimal BIGINT UNSIGNED id. Anything else matches no row (MySQL would read "12abc" as 12). */
export function isId(id: unknown): id is string {
  return typeof id === 'string' && /^\d{1,20}$/.test(id) && BigInt(id) <= MAX_BIGINT_UNSIGNED;
}

/**
 * `id = ?` for one id, `id IN (?, ...)` for several (each cast as the ids are strings). One id keeps the
 * point lookup the single-timer writes always had: a one-element IN can run as a range read, whose
 * locking read also locks the next timer's row under REPEATABLE READ, and two concurrent disables of
 * neighbouring timers then deadlocked (fire-policies e2e: 500 on one of them).
 */
export function idMatches(count: number, column = 'id'): string {
  return count === 1 ? `${column} = CAST(? AS UNSIGNED)` : `${column} IN (${Array.from({ length: count }, () => 'CAST(? AS UNSIGNED)').join(', ')})`;
}

/** Refuses anything but an integer of epoch ms (a float or NaN would reach SQL as a surprise). */
export function checkEpochMs(name: string, value: number): void {
  if (!Number.isSafeInteger(value)) throw new RangeError(`${name} must be an integer of epoch ms`);
}

/** Largest page size the list queries serve. */
export const MAX_PAGE_SIZE = 1000;

export interface PageOptions {
  /** 1-based. */
  page: number;
  size: number;
}

/** Validates paging and returns the row offset. */
export function pageOffset({ page, size }: PageOptions): number {
  if (!Number.isSafeInteger(page) || page < 1) throw new RangeError('page must be an integer >= 1');
  if (!Number.isSafeInteger(size) || size < 1 || size > MAX_PAGE_SIZE) throw new RangeError(`size must be an integer in [1, ${MAX_PAGE_SIZE}]`);
  return (page - 1) * size;
}

/** `%term%` for LIKE ... ESCAPE '!', with the wildcards `%`, `_` and the escape `!` taken literally. */
export function likeContains(term: string): string {
  return `%${term.replace(/[!%_]/g, (c) => `!${c}`)}%`;
}

/** The affected-row count of a write run through `query()` (mysql2 ResultSetHeader). */
export function affectedRows(result: unknown): number {
  const header = (Array.isArray(result) ? result[1] ?? result[0] : result) as { affectedRows?: number } | undefined;
  return header?.affectedRows ?? 0;
}

/**
 * Runs a `DELETE ... LIMIT ?` (`sql`, with the batch size as its last parameter) until it deletes fewer
 * than `batchSize` rows or `maxBatches` statements ran, so no statement holds locks on a huge range.
 * Returns the rows deleted (maxBatches x batchSize: there may be more).
 */
export async function deleteInBatches(dataSource: DataSource, sql: string, params: unknown[], batchSize: number, maxBatches: number): Promise<number> {
  if (!Number.isSafeInteger(batchSize) || batchSize < 1) throw new RangeError('batchSize must be a positive integer');
  if (!(maxBatches >= 1)) throw new RangeError('maxBatches must be at least 1');
  let total = 0;
  for (let batches = 0; batches < maxBatches; batches++) {
    const deleted = affectedRows(await dataSource.query(sql, [...params, batchSize]));
    total += deleted;
    if (deleted < batchSize) break;
  }
  return total;
}

export function managerOf(dataSource: DataSource, manager?: EntityManager): EntityManager {
  return manager ?? dataSource.manager;
}
