import type { DataSource, EntityManager } from 'typeorm';
import type { IsolationLevel } from 'typeorm/driver/types/IsolationLevel';
import { isDeadlockError } from './errors';

type Work<T> = (manager: EntityManager) => Promise<T>;

/** Attempts of a transaction that InnoDB keeps choosing as a deadlock's victim. */
export const DEADLOCK_ATTEMPTS = 3;

/** The transaction was a deadlock's victim on every attempt: nothing was written, the caller may retry. */
export class TransactionDeadlockError extends Error {
  constructor(readonly attempts: number) {
    super(`the transaction was chosen as a deadlock victim ${attempts} times in a row`);
    this.name = 'TransactionDeadlockError';
  }
}

/**
 * Runs `fn` in one transaction (commit on success, rollback on throw); pass `manager` to repositories.
 * A deadlock rolls the whole transaction back, so it is run again from the start (after a short random
 * pause, so the two sides do not meet again), up to DEADLOCK_ATTEMPTS times: `fn` must be safe to
 * repeat, which holds for database work and for idempotent side effects (index writes keyed by fire).
 */
export function runInTransaction<T>(dataSource: DataSource, fn: Work<T>): Promise<T>;
export function runInTransaction<T>(dataSource: DataSource, isolation: IsolationLevel, fn: Work<T>): Promise<T>;
export async function runInTransaction<T>(dataSource: DataSource, a: IsolationLevel | Work<T>, b?: Work<T>): Promise<T> {
  const isolation = typeof a === 'string' ? a : undefined;
  const fn = typeof a === 'string' ? (b as Work<T>) : a;
  for (let attempt = 1; ; attempt++) {
    try {
      return isolation ? await dataSource.transaction(isolation, fn) : await dataSource.transaction(fn);
    } catch (e) {
      if (!isDeadlockError(e)) throw e;
      if (attempt >= DEADLOCK_ATTEMPTS) throw new TransactionDeadlockError(attempt);
      await new Promise((r) => setTimeout(r, 5 + Math.floor(Math.random() * 20 * attempt)));
    }
  }
}
