import { Injectable } from '@nestjs/common';
import { EntityManager } from 'typeorm';
import { INSERT_CHUNK } from './task.repository';
import { checkEpochMs, isId } from './query-helpers';

/** What {@link BackfillRepository.insertMissing} did: the instants it created, and how many existed already. */
export interface BackfilledFires {
  created: number[];
  existing: number;
}

/** The fires a backfill creates (`tasks.backfill` = 1) for past instants of one timer. */
@Injectable()
export class BackfillRepository {
  /**
   * Creates the fires of `timerId` at `runAts` (ascending, within [fromMs, toMs)) that do not exist
   * yet, marked backfill. Run it inside the transaction that holds the timer's row lock (edits, disable
   * and other backfills of the timer take it too); INSERT IGNORE all the same, since a past fire's row
   * can also be re-created by the executor for a message on its way. An existing fire, of any status,
   * is left as it is: `(timer_id, run_at)` is unique, a fire is never created twice.
   */
  async insertMissing(m: EntityManager, app: string, timerId: string, fromMs: number, toMs: number, runAts: number[]): Promise<BackfilledFires> {
    if (!isId(timerId)) throw new RangeError(`invalid timerId ${JSON.stringify(timerId)}`);
    checkEpochMs('fromMs', fromMs);
    checkEpochMs('toMs', toMs);
    if (runAts.length === 0) return { created: [], existing: 0 };
    const rows = (await m.query('SELECT run_at FROM tasks WHERE timer_id = CAST(? AS UNSIGNED) AND run_at >= ? AND run_at < ?', [timerId, fromMs, toMs])) as {
      run_at: string | number;
    }[];
    const present = new Set(rows.map((r) => Number(r.run_at)));
    const created = runAts.filter((t) => !present.has(t));
    for (let i = 0; i < created.length; i += INSERT_CHUNK) {
      const chunk = created.slice(i, i + INSERT_CHUNK);
      await m.query(
        `INSERT IGNORE INTO tasks (app, timer_id, run_at, backfill) VALUES ${chunk.map(() => '(?, CAST(? AS UNSIGNED), ?, 1)').join(', ')}`,
        chunk.flatMap((t) => [app, timerId, t]),
      );
    }
    return { created, existing: runAts.length - created.length };
  }
}
