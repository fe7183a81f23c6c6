import { Injectable, Optional } from '@nestjs/common';
import { DataSource } from 'typeorm';
import { AppEntity } from '../entities/app.entity';
import { OPEN_OUTCOME } from '../entities/task.entity';
import { TimerEntity } from '../entities/timer.entity';
import { SecretCipher } from '../secret-cipher';
import { isId } from './query-helpers';

/** A timer definition as the executor needs it: deleted and disabled ones included, with its app's secret. */
export interface TimerDefinition {
  timer: TimerEntity;
  /** The app's callback signing secret (opened), null when callbacks are not signed. */
  signingSecret: string | null;
  /** The secret a rotation replaced and the end of its overlap (epoch ms), while it is set. */
  previousSecret?: { secret: string; until: number };
}

/** See {@link TimerDefinitionRepository.changesSince}. */
export interface DefinitionChanges {
  /** Pass back as `since` next time. */
  watermark: string;
  /** Ids of changed timers; null when there were too many to list. */
  timerIds: string[] | null;
  /** Apps whose signing secret (or anything else) changed. */
  apps: string[];
}

/** How far back each change poll looks again, for statements that committed after they ran. */
export const CHANGE_SLACK_SECONDS = 5;

/**
 * The executor's definition cache queries on `timers` and `apps`: a definition with its app's signing
 * secret, the definitions due soon (prefetch), and what changed since the last poll.
 */
@Injectable()
export class TimerDefinitionRepository {
  private readonly cipher: SecretCipher;

  constructor(
    private readonly dataSource: DataSource,
    @Optional() cipher?: SecretCipher,
  ) {
    this.cipher = cipher ?? SecretCipher.PLAIN;
  }

  /**
   * What changed since `since` (a watermark this method returned before; null on the first call):
   * timers (status, deletion) and apps (signing secret) whose updated_at is at or after it. Both
   * columns are set by the database clock, and the next watermark is the database's now minus
   * {@link CHANGE_SLACK_SECONDS}, so a statement that committed late is still seen. Returns null
   * for `timerIds` when more than `limit` timers changed (the caller should drop everything).
   */
  async changesSince(since: string | null, limit: number): Promise<DefinitionChanges> {
    const [{ watermark }] = (await this.dataSource.query(
      `SELECT DATE_FORMAT(NOW(3) - INTERVAL ${CHANGE_SLACK_SECONDS} SECOND, '%Y-%m-%d %H:%i:%s.%f') AS watermark`,
    )) as { watermark: string }[];
    if (since === null) return { watermark, timerIds: [], apps: [] };
    const timers = (await this.dataSource.query('SELECT id FROM timers WHERE updated_at >= ? ORDER BY updated_at LIMIT ?', [since, limit + 1])) as {
      id: string | number;
    }[];
    const apps = (await this.dataSource.query('SELECT app FROM apps WHERE updated_at >= ?', [since])) as { app: string }[];
    return {
      watermark,
      timerIds: timers.length > limit ? null : timers.map((r) => String(r.id)),
      apps: apps.map((r) => r.app),
    };
  }

  /** The timer `id` with its app's signing secret, deleted and disabled timers included; null when absent. */
  async definition(id: string): Promise<TimerDefinition | null> {
    if (!isId(id)) return null;
    const found = await this.definitionsWhere('t.id = CAST(:id AS UNSIGNED)', { id });
    return found[0] ?? null;
  }

  /**
   * The definitions of `ids` that exist (deleted and disabled included), in one query: a cold cache's
   * misses loaded together (a top-of-hour burst of hourly timers is one miss per fire). Invalid ids are
   * skipped; the caller treats an id not returned as absent.
   */
  async definitions(ids: readonly string[]): Promise<TimerDefinition[]> {
    const valid = [...new Set(ids.filter(isId))];
    if (valid.length === 0) return [];
    const params: Record<string, string> = {};
    valid.forEach((id, i) => (params[`id${i}`] = id));
    return this.definitionsWhere(`t.id IN (${valid.map((_, i) => `CAST(:id${i} AS UNSIGNED)`).join(', ')})`, params);
  }

  /**
   * Definitions (with secrets) of the timers that have open (pending or running) fires with run_at in
   * [fromMs, toMs), at most `limit`, in one query: the executor's prefetch of what it will call soon.
   * The fires are a range of `idx_outcome_run_at` read alone (it holds timer_id); named, since without
   * a run_at-first index the optimizer would otherwise scan the table.
   */
  async definitionsDueBetween(fromMs: number, toMs: number, limit: number): Promise<TimerDefinition[]> {
    if (!Number.isSafeInteger(fromMs) || !Number.isSafeInteger(toMs)) throw new RangeError('fromMs and toMs must be integers of epoch ms');
    if (!Number.isSafeInteger(limit) || limit < 1) throw new RangeError('limit must be a positive integer');
    return this.definitionsWhere(
      't.id IN (SELECT k.timer_id FROM tasks k FORCE INDEX (idx_outcome_run_at) WHERE k.outcome = :open AND k.run_at >= :fromMs AND k.run_at < :toMs)',
      { fromMs, toMs, open: OPEN_OUTCOME },
      limit,
    );
  }

  private async definitionsWhere(where: string, params: Record<string, unknown>, limit?: number): Promise<TimerDefinition[]> {
    const q = this.dataSource.manager
      .createQueryBuilder(TimerEntity, 't')
      .leftJoin(AppEntity, 'a', 'a.app = t.app')
      .addSelect('a.signing_secret', 'signing_secret')
      .addSelect('a.previous_signing_secret', 'previous_signing_secret')
      .addSelect('a.previous_secret_until', 'previous_secret_until')
      .where(where, params);
    if (limit !== undefined) q.limit(limit);
    const { entities, raw } = await q.getRawAndEntities<{ signing_secret: string | null; previous_signing_secret: string | null; previous_secret_until: string | number | null }>();
    return entities.map((timer, i) => {
      const r = raw[i];
      const def: TimerDefinition = { timer, signingSecret: this.cipher.openOrNull(timer.app, r?.signing_secret ?? null) };
      if (r?.previous_signing_secret && r.previous_secret_until !== null) {
        def.previousSecret = { secret: this.cipher.open(timer.app, r.previous_signing_secret), until: Number(r.previous_secret_until) };
      }
      return def;
    });
  }
}
