import { Counter, Gauge, Registry } from 'prom-client';

export type RescueReason = 'pending' | 'stale_claim' | 'lost_retry';

/** The reconciler's Prometheus metrics (registered on the role's registry). */
export class ReconcilerMetrics {
  readonly overdue: Gauge;
  readonly unsettledFinishedWindows: Gauge;
  readonly rescued: Counter<'reason'>;
  readonly pausedApps: Gauge;
  readonly pausedMissed: Counter;
  readonly executorBacklogLag: Gauge;

  constructor(registry: Registry) {
    const registers = [registry];
    this.overdue = new Gauge({
      name: 'timer_overdue_fires',
      help: 'Pending fires past run_at + TIMER_RECONCILER_GRACE_MS (counted up to 100000): 0 when nothing is stranded',
      registers,
    });
    this.unsettledFinishedWindows = new Gauge({
      name: 'timer_unsettled_fires_finished_windows',
      help: 'Pending or running fires of windows that have ended (counted up to 100000)',
      registers,
    });
    this.rescued = new Counter({
      name: 'timer_reconciler_rescued_total',
      help: 'Overdue fires the reconciler published again, by reason: pending (never picked up), stale_claim (its executor stopped before recording it), lost_retry (its retry message is missing)',
      labelNames: ['reason'],
      registers,
    });
    this.executorBacklogLag = new Gauge({
      name: 'timer_executor_backlog_lag_seconds',
      help: "Age of the oldest task message (timer-tasks, timer-tasks-catchup) no executor has acknowledged, as the last reconciler pass read it: how far behind the executors are",
      registers,
    });
    this.pausedApps = new Gauge({ name: 'timer_paused_apps', help: 'Apps paused now (POST /api/app/v1/pause), as the last reconciler pass read them', registers });
    this.pausedMissed = new Counter({
      name: 'timer_paused_fires_missed_total',
      help: 'Fires of paused apps the reconciler recorded missed with the reason paused (the resume records the rest of the interval)',
      registers,
    });
  }
}
