import { Column, Entity, PrimaryColumn } from 'typeorm';
import { FailureWebhook } from './app.entity';
import { NotifyHttpParam, TimerStatusValue } from './timer.entity';
import { bigintNumber, bigintString } from './transformers';

/**
 * How a version of a timer came about; 'existing' marks the version a timer had when history began,
 * 'complete' the migrator's completion sweep (status completed), 'calendar' an edit of a calendar the
 * timer uses (its copy of the calendars' definitions changed).
 */
export const TIMER_CHANGES = ['create', 'update', 'patch', 'enable', 'disable', 'complete', 'existing', 'calendar'] as const;
export type TimerChange = (typeof TIMER_CHANGES)[number];

/** One version of a timer's definition, as it was written (`timer_versions`). */
@Entity({ name: 'timer_versions' })
export class TimerVersionEntity {
  @PrimaryColumn({ type: 'bigint', unsigned: true, generated: 'increment', transformer: bigintString })
  id!: string;

  @Column({ name: 'timer_id', type: 'bigint', unsigned: true, transformer: bigintString })
  timerId!: string;

  @Column({ type: 'varchar', length: 64 })
  app!: string;

  @Column({ type: 'int' })
  version!: number;

  @Column({ name: 'change_kind', type: 'varchar', length: 16 })
  change!: TimerChange;

  /** When this version was written, epoch ms. */
  @Column({ name: 'changed_at', type: 'bigint', transformer: bigintNumber })
  changedAt!: number;

  @Column({ type: 'varchar', length: 255 })
  name!: string;

  @Column({ type: 'varchar', length: 255, nullable: true })
  cron!: string | null;

  @Column({ name: 'run_at', type: 'bigint', nullable: true, transformer: bigintNumber })
  runAt!: number | null;

  @Column({ name: 'every_ms', type: 'bigint', nullable: true, transformer: bigintNumber })
  everyMs!: number | null;

  @Column({ name: 'time_zone', type: 'varchar', length: 64 })
  timeZone!: string;

  /** A fixed-hour cron's wall times in a DST gap: `shift` (once at the gap's end, default) or `skip` (libs/schedule README). */
  @Column({ name: 'dst_gap', type: 'varchar', length: 8 })
  dstGap!: string;

  /** A fixed-hour cron's wall times in a DST overlap: `first` (default) or `both` occurrences. */
  @Column({ name: 'dst_overlap', type: 'varchar', length: 8 })
  dstOverlap!: string;

  @Column({ name: 'start_at', type: 'bigint', nullable: true, transformer: bigintNumber })
  startAt!: number | null;

  @Column({ name: 'end_at', type: 'bigint', nullable: true, transformer: bigintNumber })
  endAt!: number | null;

  @Column({ name: 'max_fires', type: 'int', nullable: true })
  maxFires!: number | null;

  @Column({ name: 'final_at', type: 'bigint', nullable: true, transformer: bigintNumber })
  finalAt!: number | null;

  @Column({ name: 'notify_http_param', type: 'json' })
  notifyHttpParam!: NotifyHttpParam;

  @Column({ type: 'tinyint' })
  status!: TimerStatusValue;

  @Column({ name: 'max_attempts', type: 'int' })
  maxAttempts!: number;

  @Column({ name: 'backoff_ms', type: 'int' })
  backoffMs!: number;

  @Column({ name: 'misfire_policy', type: 'varchar', length: 32 })
  misfirePolicy!: string;

  /** `allow` (default), `skip` or `buffer_one` (docs/behaviour.md, "Fire policies"). */
  @Column({ name: 'overlap_policy', type: 'varchar', length: 16 })
  overlapPolicy!: string;

  /** `all`, `latest` or `none`; null: `misfirePolicy` decides (fire_late = all, skip = none). */
  @Column({ name: 'catchup_policy', type: 'varchar', length: 16, nullable: true })
  catchupPolicy!: string | null;

  /** How late a fire may still be delivered (ms); null: the executor's TIMER_MISFIRE_WINDOW_MS. */
  @Column({ name: 'catchup_window_ms', type: 'bigint', nullable: true, transformer: bigintNumber })
  catchupWindowMs!: number | null;

  /** Each fire is delayed by a fixed amount in [0, jitterMs) derived from its id; 0 = none. */
  @Column({ name: 'jitter_ms', type: 'int' })
  jitterMs!: number;

  /** Admission may spread the timer's fires within `jitterMs` instead of refusing it (apps/api/README.md, "Quotas and admission"). */
  @Column({ name: 'auto_spread', type: 'boolean' })
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

  /** The calendars the version refers to (names); null: none. */
  @Column({ type: 'json', nullable: true })
  calendars!: string[] | null;

  @Column({ name: 'on_excluded', type: 'varchar', length: 24 })
  onExcluded!: string;
}
