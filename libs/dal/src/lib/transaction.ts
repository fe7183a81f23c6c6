import type { DataSource, EntityManager } from 'typeorm';

/** Runs `fn` in one transaction (commit on success, rollback on throw); pass `manager` to repositories. */
export function runInTransaction<T>(dataSource: DataSource, fn: (manager: EntityManager) => Promise<T>): Promise<T> {
  return dataSource.transaction(fn);
}
