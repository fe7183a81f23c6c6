import { Injectable } from '@nestjs/common';
import type { MaintenanceWindow, MaintenancePolicy } from '@timer/schedule';
import { DataSource, EntityManager } from 'typeorm';
import { managerOf } from './query-helpers';

/** A window to store (its id is assigned). */
export type NewMaintenanceWindow = Omit<MaintenanceWindow, 'id'>;

/** A stored window with its creation instant (epoch ms). */
export interface StoredMaintenanceWindow extends MaintenanceWindow {
  createdAt: number;
}

interface Row {
  id: string | number;
  app: string;
  timer_ids: string | string[] | null;
  from_ms: string | number | null;
  to_ms: string | number | null;
  cron: string | null;
  duration_ms: string | number | null;
  policy: string;
  created_at: Date;
}

const num = (v: string | number | null): number | null => (v === null ? null : Number(v));

/** `maintenance_windows`: the source of truth the Redis mirror (`MaintenanceWindows`) is rebuilt from. */
@Injectable()
export class MaintenanceWindowRepository {
  constructor(private readonly dataSource: DataSource) {}

  async insert(w: NewMaintenanceWindow, manager?: EntityManager): Promise<string> {
    const r = (await managerOf(this.dataSource, manager).query(
      'INSERT INTO maintenance_windows (app, timer_ids, from_ms, to_ms, cron, duration_ms, policy) VALUES (?, ?, ?, ?, ?, ?, ?)',
      [w.app, w.timerIds === null ? null : JSON.stringify(w.timerIds), w.fromMs, w.toMs, w.cron, w.durationMs, w.policy],
    )) as { insertId: number | string };
    return String(r.insertId);
  }

  /** The app's windows, oldest first. */
  async list(app: string, manager?: EntityManager): Promise<StoredMaintenanceWindow[]> {
    const rows = (await managerOf(this.dataSource, manager).query('SELECT * FROM maintenance_windows WHERE app = ? ORDER BY id', [app])) as Row[];
    return rows.map(toWindow);
  }

  /** Those of `ids` that are live timers of the app. */
  async liveTimerIds(app: string, ids: readonly string[], manager?: EntityManager): Promise<Set<string>> {
    if (ids.length === 0) return new Set();
    const rows = (await managerOf(this.dataSource, manager).query(
      `SELECT id FROM timers WHERE app = ? AND live_name IS NOT NULL AND id IN (${ids.map(() => '?').join(', ')})`,
      [app, ...ids],
    )) as { id: string | number }[];
    return new Set(rows.map((r) => String(r.id)));
  }

  /** Deletes one window of the app; false when it has no such window. */
  async delete(app: string, id: string, manager?: EntityManager): Promise<boolean> {
    const r = (await managerOf(this.dataSource, manager).query('DELETE FROM maintenance_windows WHERE app = ? AND id = ?', [app, id])) as { affectedRows: number };
    return r.affectedRows > 0;
  }
}

function toWindow(r: Row): StoredMaintenanceWindow {
  const ids = typeof r.timer_ids === 'string' ? (JSON.parse(r.timer_ids) as string[]) : r.timer_ids;
  return {
    id: String(r.id),
    app: r.app,
    timerIds: ids === null ? null : ids.map(String),
    fromMs: num(r.from_ms),
    toMs: num(r.to_ms),
    cron: r.cron,
    durationMs: num(r.duration_ms),
    policy: r.policy as MaintenancePolicy,
    createdAt: r.created_at.getTime(),
  };
}
