import { Injectable } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { checkEpochMs } from './query-helpers';

/**
 * The migrator's record of completed windows (`migrator_windows`): a window is inserted once every
 * fire of it is in MySQL and in the slice index. Instants are epoch ms (UTC).
 * Not part of DalRepositoriesModule: the migrator provides it (it needs only the DataSource).
 */
@Injectable()
export class MigratorWindowRepository {
  constructor(private readonly dataSource: DataSource) {}

  /** Starts of the earliest and the latest completed windows, or null when none was ever completed. */
  async completedBounds(): Promise<{ first: number; last: number } | null> {
    const rows: { f: number | string | null; l: number | string | null }[] = await this.dataSource.query(
      'SELECT MIN(window_start) AS f, MAX(window_start) AS l FROM migrator_windows',
    );
    const r = rows[0];
    return !r || r.f === null || r.l === null ? null : { first: Number(r.f), last: Number(r.l) };
  }

  /** Starts of the completed windows with fromStart <= window_start <= toStart, ascending. */
  async completedBetween(fromStart: number, toStart: number): Promise<number[]> {
    checkEpochMs('fromStart', fromStart);
    checkEpochMs('toStart', toStart);
    const rows: { s: number | string }[] = await this.dataSource.query(
      'SELECT window_start AS s FROM migrator_windows WHERE window_start BETWEEN ? AND ? ORDER BY window_start',
      [fromStart, toStart],
    );
    return rows.map((r) => Number(r.s));
  }

  async isCompleted(windowStart: number): Promise<boolean> {
    checkEpochMs('windowStart', windowStart);
    const rows: unknown[] = await this.dataSource.query('SELECT 1 FROM migrator_windows WHERE window_start = ?', [windowStart]);
    return rows.length > 0;
  }

  /** Records the window as completed; idempotent (a second call leaves the first record). */
  async markCompleted(windowStart: number, windowEnd: number): Promise<void> {
    checkEpochMs('windowStart', windowStart);
    checkEpochMs('windowEnd', windowEnd);
    if (!(windowStart < windowEnd)) throw new RangeError('windowEnd must be after windowStart');
    await this.dataSource.query('INSERT IGNORE INTO migrator_windows (window_start, window_end) VALUES (?, ?)', [windowStart, windowEnd]);
  }
}

