import { AfterLoad, Column, CreateDateColumn, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';
import { FireStatus, FireStatusValue } from '@timer/contracts';
import { bigintNumber, bigintString } from './transformers';

/** `tasks.status`: the fire statuses of `@timer/contracts`, under the name the repositories use. */
export const TaskStatus = FireStatus;
export type TaskStatusValue = FireStatusValue;
/** Statuses of a settled fire (its record may be purged after retention). */
export const FINISHED_TASK_STATUSES: readonly TaskStatusValue[] = [TaskStatus.Succeeded, TaskStatus.Failed, TaskStatus.Missed];
/** `tasks.outcome` of an open fire (pending or running); a settled fire's is its status. */
export const OPEN_OUTCOME = 0;
/** Every value of `tasks.outcome`: a range per value covers all of `idx_outcome_run_at`. */
export const TASK_OUTCOMES: readonly number[] = [OPEN_OUTCOME, ...FINISHED_TASK_STATUSES];

/** Column widths (characters); write through truncateUtf8 so a long value never fails a write. */
export const TASK_OUTPUT_MAX = 4096;
export const TASK_ERROR_MAX = 1024;
/** Attempts a fire's record keeps (the latest; a replayed dead letter starts over at attempt 1). */
export const TASK_ATTEMPTS_KEPT = 32;
/** Characters of an attempt's error kept in its entry of `attempts`. */
export const ATTEMPT_ERROR_MAX = 256;

/** What the receiver answered an attempt, as its entry of `tasks.attempts` keeps it (docs/callback-answers.md). */
export interface TaskAttemptResponse {
  status: number;
  /** The configured subset (TIMER_RECORD_HEADERS), lower-case names. */
  headers: Record<string, string>;
  /** The first TIMER_RECORD_BODY_BYTES bytes, UTF-8 with invalid sequences replaced by U+FFFD. */
  body: string;
  /** The body was longer than what `body` keeps. */
  truncated: boolean;
}

/** One delivery attempt of a fire, as `tasks.attempts` keeps it. */
export interface TaskAttempt {
  /** 1-based. */
  attempt: number;
  /** When the callback started (epoch ms). */
  startedAt: number;
  httpStatus: number | null;
  costMs: number | null;
  error: string | null;
  /** What the receiver answered; absent when the executor keeps no answers or none came (no connection, timeout). */
  response?: TaskAttemptResponse;
}

/** The columns {@link attemptsOf} reads. */
export interface AttemptColumns {
  attempt: number;
  httpStatus: number | null;
  costMs: number | null;
  error: string | null;
  attempts: TaskAttempt[] | null;
  startedAt: number;
}

/**
 * A fire's attempts as `attempts` would hold them had every outcome appended: a first-attempt success
 * leaves `attempts` NULL and writes `started_at` (migration 1765050000000), so its one entry is
 * rebuilt from the row's columns, key for key what the outcome's JSON_OBJECT would have written.
 */
export function attemptsOf(r: AttemptColumns): TaskAttempt[] | null {
  if (r.attempts !== null || !r.startedAt) return r.attempts;
  // LEFT(error, ATTEMPT_ERROR_MAX) counts characters (code points), as Array.from does.
  const error = r.error === null ? null : Array.from(r.error).slice(0, ATTEMPT_ERROR_MAX).join('');
  return [{ attempt: r.attempt, startedAt: r.startedAt, httpStatus: r.httpStatus, costMs: r.costMs, error }];
}

/** One fire of a timer, identified by (timerId, runAt). */
@Entity({ name: 'tasks' })
export class TaskEntity {
  @PrimaryColumn({ type: 'bigint', unsigned: true, generated: 'increment', transformer: bigintString })
  id!: string;

  @Column({ type: 'varchar', length: 64 })
  app!: string;

  @Column({ name: 'timer_id', type: 'bigint', unsigned: true, transformer: bigintString })
  timerId!: string;

  /** Scheduled instant, epoch ms. */
  @Column({ name: 'run_at', type: 'bigint', transformer: bigintNumber })
  runAt!: number;

  @Column({ type: 'tinyint', default: 0 })
  status!: TaskStatusValue;

  @Column({ type: 'int', default: 0 })
  attempt!: number;

  @Column({ name: 'http_status', type: 'smallint', nullable: true })
  httpStatus!: number | null;

  @Column({ name: 'cost_ms', type: 'int', nullable: true })
  costMs!: number | null;

  @Column({ name: 'lateness_ms', type: 'int', nullable: true })
  latenessMs!: number | null;

  @Column({ type: 'varchar', length: TASK_ERROR_MAX, nullable: true })
  error!: string | null;

  @Column({ type: 'varchar', length: TASK_OUTPUT_MAX, nullable: true })
  output!: string | null;

  /**
   * Every attempt made, oldest first (at most TASK_ATTEMPTS_KEPT); null before the first. Stored NULL
   * for a first-attempt success; loading an entity rebuilds it ({@link attemptsOf}).
   */
  @Column({ type: 'json', nullable: true })
  attempts!: TaskAttempt[] | null;

  /** When a first-attempt success's callback started (epoch ms); 0 otherwise (migration 1765050000000). */
  @Column({ name: 'started_at', type: 'bigint', default: 0, transformer: bigintNumber })
  startedAt!: number;

  @Column({ name: 'claimed_by', type: 'varchar', length: 128, nullable: true })
  claimedBy!: string | null;

  @Column({ name: 'claimed_until', type: 'bigint', nullable: true, transformer: bigintNumber })
  claimedUntil!: number | null;

  /** Created by a backfill (a past instant delivered on request): exempt from the catch-up policy, `X-Timer-Backfill: 1`. */
  @Column({ type: 'boolean', default: false })
  backfill!: boolean;

  /** When the app purged this fire's dead letter (epoch ms); the failed record stays. */
  @Column({ name: 'dlq_purged_at', type: 'bigint', nullable: true, transformer: bigintNumber })
  dlqPurgedAt!: number | null;

  /**
   * run_at while the fire is a dead letter (failed, not purged), else null: a VIRTUAL column MariaDB
   * computes (migration 1764900000000), indexed with the app; never written. Not declared generated
   * here: TypeORM would then keep a `typeorm_metadata` table for it, and the schema is the migrations'.
   */
  @Column({ name: 'dead_letter_at', type: 'bigint', nullable: true, transformer: bigintNumber, insert: false, update: false })
  deadLetterAt!: number | null;

  /**
   * {@link OPEN_OUTCOME} while the fire is pending or running, else its status: a STORED generated
   * column (migration 1765040000000) that the indexes hold instead of status, so a claim moves no index
   * entry; never written, not selected (read it in a query's conditions and order).
   */
  @Column({ type: 'tinyint', insert: false, update: false, select: false })
  outcome!: number;

  @CreateDateColumn({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt!: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'datetime', precision: 3 })
  updatedAt!: Date;

  @AfterLoad()
  protected rebuildAttempts(): void {
    // Only when the query selected the columns the rebuild reads.
    if (this.attempts !== undefined && this.startedAt !== undefined) this.attempts = attemptsOf(this);
  }
}
