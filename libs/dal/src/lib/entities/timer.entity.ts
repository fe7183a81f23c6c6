import { Column, CreateDateColumn, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';
import type { CalendarRules } from '@timer/schedule';
import { FailureWebhook } from './app.entity';
import { bigintNumber, bigintString } from './transformers';

/**
 * Timer status values: 1 disabled ("unable") and 2 enabled (the reference implementation's), 3
 * completed (its final fire instant passed and every fire settled; set by the migrator's completion sweep).
 */
export const TimerStatus = { Disabled: 1, Enabled: 2, Completed: 3 } as const;
export type TimerStatusValue = (typeof TimerStatus)[keyof typeof TimerStatus];

/** The HTTP callback of a timer, as the public API carries it (`notifyHTTPParam`). */
export interface NotifyHttpParam {
  url: string;
  method: string;
  /** `map[string][]string`, as in the reference implementation. */
  header?: Record<string, string[]>;
  /** Sent verbatim (unless `template`). */
  body?: string;
  /** This timer's callback timeout (ms); absent: the executor's TIMER_CALLBACK_TIMEOUT_MS. */
  timeoutMs?: number;
  /** `{{placeholder}}`s in the URL, header values and body are filled per fire (`@timer/callback` template). */
  template?: boolean;
}

/**
 * A timer definition. Exactly one of `cron` / `runAt` / `everyMs` is set. `liveName` is `name` while the timer
 * is live and null once deleted (so the name can be reused); `deletedAt` is epoch ms.
 */
@Entity({ name: 'timers' })
export class TimerEntity {
  @PrimaryColumn({ type: 'bigint', unsigned: true, generated: 'increment', transformer: bigintString })
  id!: string;

  @Column({ type: 'varchar', length: 64 })
  app!: string;

  @Column({ type: 'varchar', length: 255 })
  name!: string;

  @Column({ name: 'live_name', type: 'varchar', length: 255, nullable: true })
  liveName!: string | null;

  @Column({ type: 'varchar', length: 255, nullable: true })
  cron!: string | null;

  /** One-shot instant, epoch ms. */
  @Column({ name: 'run_at', type: 'bigint', nullable: true, transformer: bigintNumber })
  runAt!: number | null;

  /** Interval in ms (fires at startAt + k * everyMs). */
  @Column({ name: 'every_ms', type: 'bigint', nullable: true, transformer: bigintNumber })
  everyMs!: number | null;

  @Column({ name: 'time_zone', type: 'varchar', length: 64, default: 'UTC' })
  timeZone!: string;

  /** A fixed-hour cron's wall times in a DST gap: `shift` (once at the gap's end, default) or `skip` (libs/schedule README). */
  @Column({ name: 'dst_gap', type: 'varchar', length: 8, default: 'shift' })
  dstGap!: string;

  /** A fixed-hour cron's wall times in a DST overlap: `first` (default) or `both` occurrences. */
  @Column({ name: 'dst_overlap', type: 'varchar', length: 8, default: 'first' })
  dstOverlap!: string;

  /** No fire before this (epoch ms, inclusive); the anchor of an interval. */
  @Column({ name: 'start_at', type: 'bigint', nullable: true, transformer: bigintNumber })
  startAt!: number | null;

  /** No fire after this (epoch ms, inclusive), as given. */
  @Column({ name: 'end_at', type: 'bigint', nullable: true, transformer: bigintNumber })
  endAt!: number | null;

  @Column({ name: 'max_fires', type: 'int', nullable: true })
  maxFires!: number | null;

  /**
   * The last instant a fire may have (epoch ms, inclusive): min(endAt, the maxFires-th fire) or a
   * one-shot's runAt, computed when the definition is written; null = unbounded. The completion sweep
   * reads it through `idx_status_final`.
   */
  @Column({ name: 'final_at', type: 'bigint', nullable: true, transformer: bigintNumber })
  finalAt!: number | null;

  /**
   * Every fire before this instant (epoch ms) exists: set by whoever creates the timer's fires (enable,
   * edit, the migrator's windows), read by the migrator through `idx_status_next_fire`. Null: no fire
   * left; 0: not known yet (the migrator resolves it). Never bumps `updated_at`.
   */
  @Column({ name: 'next_fire_at', type: 'bigint', nullable: true, default: 0, transformer: bigintNumber })
  nextFireAt!: number | null;

  @Column({ name: 'notify_http_param', type: 'json' })
  notifyHttpParam!: NotifyHttpParam;

  @Column({ type: 'tinyint' })
  status!: TimerStatusValue;

  @Column({ name: 'max_attempts', type: 'int', default: 3 })
  maxAttempts!: number;

  @Column({ name: 'backoff_ms', type: 'int', default: 1000 })
  backoffMs!: number;

  @Column({ name: 'misfire_policy', type: 'varchar', length: 32, default: 'fire_late' })
  misfirePolicy!: string;

  /** `allow` (default), `skip` or `buffer_one` (docs/behaviour.md, "Fire policies"). */
  @Column({ name: 'overlap_policy', type: 'varchar', length: 16, default: 'allow' })
  overlapPolicy!: string;

  /** `all`, `latest` or `none`; null: `misfirePolicy` decides (fire_late = all, skip = none). */
  @Column({ name: 'catchup_policy', type: 'varchar', length: 16, nullable: true })
  catchupPolicy!: string | null;

  /** How late a fire may still be delivered (ms); null: the executor's TIMER_MISFIRE_WINDOW_MS. */
  @Column({ name: 'catchup_window_ms', type: 'bigint', nullable: true, transformer: bigintNumber })
  catchupWindowMs!: number | null;

  /** Each fire is delayed by a fixed amount in [0, jitterMs) derived from its id; 0 = none. */
  @Column({ name: 'jitter_ms', type: 'int', default: 0 })
  jitterMs!: number;

  /** Admission may spread the timer's fires within `jitterMs` instead of refusing it (apps/api/README.md, "Quotas and admission"). */
  @Column({ name: 'auto_spread', type: 'boolean', default: false })
  autoSpread!: boolean;

  /** With `autoSpread`: the delay of every fire (whole seconds in [0, jitterMs)) admission chose, instead of the hash-derived jitter; null otherwise. */
  @Column({ name: 'spread_offset_ms', type: 'int', nullable: true })
  spreadOffsetMs!: number | null;

  /** Where this timer's failure notifications go; null = the app's (`AppEntity.failureWebhook`). */
  @Column({ name: 'failure_webhook', type: 'json', nullable: true })
  failureWebhook!: FailureWebhook | null;

  /** Where each final answer of this timer's callback is POSTed (docs/callback-answers.md); null = nowhere. */
  @Column({ name: 'result_webhook', type: 'json', nullable: true })
  resultWebhook!: FailureWebhook | null;

  /** Names of the app's calendars whose excluded days this timer avoids (docs/calendars.md); null: none. */
  @Column({ type: 'json', nullable: true })
  calendars!: string[] | null;

  /** What a fire on an excluded day does: `skip`, `nextBusinessDay` or `previousBusinessDay`. */
  @Column({ name: 'on_excluded', type: 'varchar', length: 24, default: 'skip' })
  onExcluded!: string;

  /** The definitions of `calendars` as fires are computed from them: written with the timer, rewritten when a calendar is edited. */
  @Column({ name: 'calendar_rules', type: 'json', nullable: true })
  calendarRules!: CalendarRules[] | null;

  /** Bumped on every change (status, delete); caches compare it. */
  @Column({ type: 'int', default: 1 })
  version!: number;

  /** Epoch ms of the soft delete, null while live. */
  @Column({ name: 'deleted_at', type: 'bigint', nullable: true, transformer: bigintNumber })
  deletedAt!: number | null;

  @CreateDateColumn({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt!: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'datetime', precision: 3 })
  updatedAt!: Date;
}
