import { Column, CreateDateColumn, Entity, PrimaryColumn } from 'typeorm';
import { bigintString } from './transformers';

/** An API token of an app. Only the SHA-256 (hex) of the token is stored. */
@Entity({ name: 'app_tokens' })
export class AppTokenEntity {
  @PrimaryColumn({ type: 'bigint', unsigned: true, generated: 'increment', transformer: bigintString })
  id!: string;

  @Column({ type: 'varchar', length: 64 })
  app!: string;

  @Column({ name: 'token_hash', type: 'char', length: 64 })
  tokenHash!: string;

  @Column({ type: 'varchar', length: 128, nullable: true })
  label!: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'datetime', precision: 3 })
  createdAt!: Date;

  @Column({ name: 'revoked_at', type: 'datetime', precision: 3, nullable: true })
  revokedAt!: Date | null;
}
