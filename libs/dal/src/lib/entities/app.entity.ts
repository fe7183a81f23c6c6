import { Column, CreateDateColumn, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';

/** An application (tenant) that owns timers, tokens and a callback signing secret. */
@Entity({ name: 'apps' })
export class AppEntity {
  @PrimaryColumn({ type: 'varchar', length: 64 })
  app!: string;

  /** HMAC-SHA256 key for `X-Timer-Signature`; null when callbacks are not signed. */
  @Column({ name: 'signing_secret', type: 'varchar', length: 128, nullable: true })
  signingSecret!: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt!: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'datetime', precision: 3 })
  updatedAt!: Date;
}
