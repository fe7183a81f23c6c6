import { Column, CreateDateColumn, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';
import { bigintNumber } from './transformers';

/** An app's failure webhook: POSTed a signed batch of notifications (docs/behaviour.md, "Failure notifications"). */
export interface FailureWebhook {
  url: string;
  headers?: Record<string, string | string[]>;
}

/** An application (tenant) that owns timers, tokens and a callback signing secret. */
@Entity({ name: 'apps' })
export class AppEntity {
  @PrimaryColumn({ type: 'varchar', length: 64 })
  app!: string;

  /**
   * The callback signing secret as stored: sealed under TIMER_SECRETS_KEY when one is set (SecretCipher);
   * null when callbacks are not signed. Read it through the repositories, which open it.
   */
  @Column({ name: 'signing_secret', type: 'varchar', length: 255, nullable: true })
  signingSecret!: string | null;

  /** The secret the last rotation replaced, as stored; it signs too until `previousSecretUntil`. */
  @Column({ name: 'previous_signing_secret', type: 'varchar', length: 255, nullable: true })
  previousSigningSecret!: string | null;

  /** End of the rotation's overlap (epoch ms); null when there is none. */
  @Column({ name: 'previous_secret_until', type: 'bigint', nullable: true, transformer: bigintNumber })
  previousSecretUntil!: number | null;

  /** Start of the app's latest pause (epoch ms); null when it was never paused. */
  @Column({ name: 'paused_at', type: 'bigint', nullable: true, transformer: bigintNumber })
  pausedAt!: number | null;

  /** End of the latest pause (epoch ms; fires from then on are delivered); null while it lasts. */
  @Column({ name: 'resumed_at', type: 'bigint', nullable: true, transformer: bigintNumber })
  resumedAt!: number | null;

  /** Where the app's failure notifications go (dead-lettered fires); null = none. */
  @Column({ name: 'failure_webhook', type: 'json', nullable: true })
  failureWebhook!: FailureWebhook | null;

  /** Quotas (docs/behaviour.md, "Quotas and admission"); null = the configured default (TIMER_QUOTA_*). */
  @Column({ name: 'max_timers', type: 'int', nullable: true })
  maxTimers!: number | null;

  @Column({ name: 'max_fires_per_minute', type: 'int', nullable: true })
  maxFiresPerMinute!: number | null;

  @Column({ name: 'min_interval_ms', type: 'bigint', nullable: true, transformer: bigintNumber })
  minIntervalMs!: number | null;

  /** Live (not deleted) timers of the app, kept by the api's create and delete under the app's row lock (maxTimers). */
  @Column({ name: 'live_timers', type: 'int', unsigned: true, default: 0 })
  liveTimers!: number;

  @CreateDateColumn({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt!: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'datetime', precision: 3 })
  updatedAt!: Date;
}
