import { Inject, Injectable, Logger } from '@nestjs/common';
import { AppEntity, AppRepository, DuplicateAppError, LedgerRepository, runInTransaction } from '@timer/dal';
import { CLOCK, NowClock } from '@timer/platform';
import { PausedApps, RESUME_MARGIN_MS } from '@timer/redis';
import { DataSource } from 'typeorm';
import { assertAdmin, assertAppAccess, Principal } from '../auth/principal';
import { conflict, notFound, unavailable } from '../common/errors';
import { AppSummaryView, IssuedToken, PauseView, SECRET_OVERLAP_DEFAULT_SECONDS, SecretView, TokenView } from './dto/app.dto';

/** Fires per statement when a resume records the paused interval's pending fires missed. */
export const RESUME_SETTLE_BATCH = 5_000;

/**
 * App administration. Creating apps and issuing tokens need the admin token; revoking a token,
 * rotating the signing secret, pausing and resuming may also be done with a token of that app.
 * Another app's token: 403.
 */
@Injectable()
export class AppsService {
  private readonly logger = new Logger(AppsService.name);

  constructor(
    private readonly apps: AppRepository,
    private readonly ledger: LedgerRepository,
    private readonly paused: PausedApps,
    private readonly dataSource: DataSource,
    @Inject(CLOCK) private readonly clock: NowClock,
  ) {}

  async create(p: Principal, app: string): Promise<{ app: string }> {
    assertAdmin(p, 'creating an app');
    try {
      await this.apps.create(app);
    } catch (e) {
      if (e instanceof DuplicateAppError) throw conflict(`app ${app} already exists`);
      throw e;
    }
    return { app };
  }

  async issueToken(p: Principal, app: string, label?: string): Promise<IssuedToken> {
    assertAdmin(p, 'issuing a token');
    await this.mustExist(app);
    const { id, token } = await this.apps.addToken(app, label);
    return { id: Number(id), token };
  }

  /** Every app, by name: the admin's list (an app token is refused 403: other apps' names are not its to see). */
  async list(p: Principal, pageIndex: number, pageSize: number): Promise<{ data: AppSummaryView[]; total: number }> {
    assertAdmin(p, 'listing apps');
    return this.apps.list(pageIndex, pageSize);
  }

  /** The app's tokens (ids, labels, times; never a token or its hash), for the admin or a token of that app. */
  async listTokens(p: Principal, app: string, includeRevoked = false): Promise<{ data: TokenView[]; total: number }> {
    assertAppAccess(p, app);
    await this.mustExist(app);
    const data = (await this.apps.listTokens(app, includeRevoked)).map((t) => ({ ...t, id: Number(t.id) }));
    return { data, total: data.length };
  }

  async revokeToken(p: Principal, app: string, tokenId: string): Promise<void> {
    assertAppAccess(p, app);
    await this.mustExist(app);
    const revoked = await this.apps.revokeToken(app, tokenId);
    if (revoked === false) throw notFound(`app ${app} has no live token ${tokenId}`);
  }

  /**
   * A new signing secret; the replaced one keeps signing for `overlapSeconds` (docs/behaviour.md,
   * "Callback signatures"). The executors see the change within TIMER_EXECUTOR_CACHE_TTL_MS.
   */
  async rotateSecret(p: Principal, app: string, overlapSeconds = SECRET_OVERLAP_DEFAULT_SECONDS): Promise<SecretView> {
    assertAppAccess(p, app);
    const found = await this.mustExist(app);
    const previousSecretValidUntil = overlapSeconds > 0 && found.signingSecret !== null ? this.clock.now() + overlapSeconds * 1000 : null;
    return { secret: await this.apps.rotateSecret(app, previousSecretValidUntil), previousSecretValidUntil };
  }

  /**
   * Pauses every timer of the app from now on (docs/behaviour.md, "Pause"): `apps.paused_at` and its
   * Redis mirror, which the executors re-read every 500 ms, in one transaction under the app's row
   * lock (the mirror is written before the commit: a Redis failure rolls the pause back, 503).
   */
  async pause(p: Principal, app: string): Promise<PauseView> {
    assertAppAccess(p, app);
    return runInTransaction(this.dataSource, async (m) => {
      const state = await this.apps.pauseForUpdate(app, m);
      if (!state) throw notFound(`app ${app} not found`);
      if (state.pausedAt !== null && state.resumedAt === null) return view(app, false, state.pausedAt, null, 0);
      const now = this.clock.now();
      await this.apps.setPause(app, now, null, m);
      await this.mirror(app, 'pause', () => this.paused.pause(app, now, now));
      return view(app, true, now, null, 0);
    });
  }

  /**
   * Ends the app's pause at R = now + {@link RESUME_MARGIN_MS} (the executors' refresh): fires from R
   * on are delivered, the interval's pending fires before R are recorded missed (`paused`) in batches
   * after the commit; should that stop halfway, the migrator's reconciler settles the rest, and it
   * never re-publishes them.
   */
  async resume(p: Principal, app: string): Promise<PauseView> {
    assertAppAccess(p, app);
    const resumed = await runInTransaction(this.dataSource, async (m) => {
      const state = await this.apps.pauseForUpdate(app, m);
      if (!state) throw notFound(`app ${app} not found`);
      if (state.pausedAt === null || state.resumedAt !== null) return view(app, false, state.pausedAt, state.resumedAt, 0);
      const now = this.clock.now();
      const resumedAt = now + RESUME_MARGIN_MS;
      const pausedAt = state.pausedAt;
      await this.apps.setPause(app, pausedAt, resumedAt, m);
      await this.mirror(app, 'resume', () => this.paused.resume(app, pausedAt, resumedAt, now));
      return view(app, true, pausedAt, resumedAt, 0);
    });
    if (!resumed.changed || resumed.pausedAt === null || resumed.resumedAt === null) return resumed;
    return { ...resumed, missedFires: await this.settlePaused(app, resumed.pausedAt, resumed.resumedAt) };
  }

  /** Records the pending fires in [from, to) missed, in batches; on a failure, what it did (the reconciler finishes). */
  private async settlePaused(app: string, from: number, to: number): Promise<number> {
    let total = 0;
    try {
      for (;;) {
        const n = await this.ledger.missPaused(app, from, to, RESUME_SETTLE_BATCH);
        total += n;
        if (n < RESUME_SETTLE_BATCH) return total;
      }
    } catch (e) {
      this.logger.warn(`app ${app} resumed; recording its paused fires stopped after ${total} (the reconciler records the rest): ${(e as Error).message}`);
      return total;
    }
  }

  private async mirror(app: string, what: string, write: () => Promise<void>): Promise<void> {
    try {
      await write();
    } catch (e) {
      this.logger.warn(`${what} of app ${app} rolled back: the paused-apps mirror in Redis failed: ${(e as Error).message}`);
      throw unavailable(`the ${what} could not be recorded (nothing was changed): retry`);
    }
  }

  private async mustExist(app: string): Promise<AppEntity> {
    const found = await this.apps.find(app);
    if (!found) throw notFound(`app ${app} not found`);
    return found;
  }
}

function view(app: string, changed: boolean, pausedAt: number | null, resumedAt: number | null, missedFires: number): PauseView {
  return { app, changed, paused: pausedAt !== null && resumedAt === null, pausedAt, resumedAt, missedFires };
}
