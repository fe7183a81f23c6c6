import { Inject, Injectable, Logger } from '@nestjs/common';
import { fireId, MESSAGE_PROPERTIES, parseFireId } from '@timer/contracts';
import { AppRepository, DeadLetter, DeadLetterRepository, DeadLetterSelector, FailureWebhook, ReopenedFire, runInTransaction } from '@timer/dal';
import { CLOCK, NowClock } from '@timer/platform';
import { TaskPublisher, taskMessage } from '@timer/fire';
import { DataSource } from 'typeorm';
import { assertAppAccess, Principal } from '../auth/principal';
import { badRequest, notFound, unavailable } from '../common/errors';
import { ApiConfig } from '../config/api.env';
import { isPrivateLiteralHost } from '../timers/callback-policy';
import { DeadLetterSelectionDto, DeadLetterView, FailureWebhookDto, PurgeView, REPLAY_MAX, ReplayView } from './dto/dlq.dto';

/** Task messages of a replay published at once. */
const PUBLISH_CHUNK = 50;

/**
 * An app's dead letters (docs/behaviour.md, "Dead letters"): its failed fire rows in MySQL, listed,
 * replayed (reopened, then published like a run now; the executor's claim lets each through once)
 * and purged; and where its failure notifications go. Another app's token: 403, as every app route.
 */
@Injectable()
export class DeadLettersService {
  private readonly logger = new Logger(DeadLettersService.name);

  constructor(
    private readonly letters: DeadLetterRepository,
    private readonly apps: AppRepository,
    private readonly publisher: TaskPublisher,
    private readonly dataSource: DataSource,
    private readonly config: ApiConfig,
    @Inject(CLOCK) private readonly clock: NowClock,
  ) {}

  async list(p: Principal, app: string, page: { page: number; size: number }): Promise<{ data: DeadLetterView[]; total: number }> {
    await this.access(p, app);
    const { items, total } = await this.letters.list(app, page);
    return { data: items.map((l) => toView(app, l)), total };
  }

  /**
   * Reopens up to {@link REPLAY_MAX} selected dead letters in one transaction, then publishes one task
   * message each (attempt 1, `x-timer-run-now: 1`: delivered however late). The rows come first, so a
   * message always finds its fire pending; a publish that fails puts the fires not published back as
   * they were (503: retry). A second replay of the same fire finds it no longer a dead letter.
   */
  async replay(p: Principal, dto: DeadLetterSelectionDto): Promise<ReplayView> {
    const selector = selectorOf(dto);
    await this.access(p, dto.app);
    const reopened = await runInTransaction(this.dataSource, (m) => this.letters.reopen(dto.app, selector, REPLAY_MAX, m));
    const published = await this.publish(reopened);
    const ids = reopened.map((f) => fireId(f.timerId, f.runAt));
    const taken = new Set(ids);
    const notFound = 'fireIds' in selector ? [...new Set(dto.fireIds)].filter((id) => !taken.has(canonical(id))) : [];
    const remaining = 'fireIds' in selector ? 0 : await this.letters.count(dto.app, selector);
    if (published < reopened.length) {
      throw unavailable(`the broker refused a task message: ${published} of ${reopened.length} dead letters were replayed, the others are dead letters again; retry`);
    }
    return { replayed: reopened.length, fireIds: ids, notFound, remaining };
  }

  async purge(p: Principal, dto: DeadLetterSelectionDto): Promise<PurgeView> {
    const selector = selectorOf(dto);
    await this.access(p, dto.app);
    return { purged: await this.letters.purge(dto.app, selector, this.clock.now()) };
  }

  /** Sets or (null) removes the app's failure webhook. */
  async setFailureWebhook(p: Principal, app: string, dto: FailureWebhookDto | null): Promise<{ app: string; failureWebhook: FailureWebhook | null }> {
    assertAppAccess(p, app);
    if (dto !== null && !this.config.allowPrivateCallbacks && isPrivateLiteralHost(dto.url)) {
      throw badRequest('failureWebhook.url points to a loopback or private address; refused unless TIMER_CALLBACK_ALLOW_PRIVATE=true');
    }
    const webhook: FailureWebhook | null = dto === null ? null : { url: dto.url, ...(dto.headers ? { headers: dto.headers } : {}) };
    if (!(await this.letters.setFailureWebhook(app, webhook))) throw notFound(`app ${app} not found`);
    return { app, failureWebhook: webhook };
  }

  private async access(p: Principal, app: string): Promise<void> {
    assertAppAccess(p, app);
    if (!(await this.apps.find(app))) throw notFound(`app ${app} not found`);
  }

  /** Publishes the reopened fires' task messages; restores those not published. Returns how many were. */
  private async publish(fires: ReopenedFire[]): Promise<number> {
    const unpublished: ReopenedFire[] = [];
    for (let i = 0; i < fires.length; i += PUBLISH_CHUNK) {
      const chunk = fires.slice(i, i + PUBLISH_CHUNK);
      const results = await Promise.allSettled(
        chunk.map((f) =>
          this.publisher.publish(
            taskMessage(f),
            { [MESSAGE_PROPERTIES.runNow]: '1', [MESSAGE_PROPERTIES.replay]: 'api' },
          ),
        ),
      );
      results.forEach((r, j) => {
        if (r.status === 'rejected') unpublished.push(chunk[j]);
      });
      if (unpublished.length > 0) {
        unpublished.push(...fires.slice(i + PUBLISH_CHUNK));
        const reason = results.find((r): r is PromiseRejectedResult => r.status === 'rejected')?.reason as Error | undefined;
        this.logger.warn(`replay: publishing failed (${reason?.message ?? 'unknown'}); restoring ${unpublished.length} dead letters`);
        await this.letters.restore(unpublished);
        break;
      }
    }
    return fires.length - unpublished.length;
  }
}

/** The one selector of a replay or purge; 400 naming the fields when none or several are given. */
export function selectorOf(dto: DeadLetterSelectionDto): DeadLetterSelector {
  const given = (['fireIds', 'timerId', 'all'] as const).filter((k) => dto[k] !== undefined && dto[k] !== null);
  if (given.length === 0) throw badRequest('one of fireIds, timerId or all is required');
  if (given.length > 1) throw badRequest(`${given.join(' and ')} were given: give exactly one of fireIds, timerId or all`);
  // A selector given as null counts as not given (as in the count above), never as the one chosen.
  if (dto.fireIds != null) return { fireIds: dto.fireIds.map((id) => parseFireId(id)).filter((f) => f !== null) };
  if (dto.timerId != null) return { timerId: dto.timerId };
  return { all: true };
}

/** A fire id as the service writes it (`007-5` names the fire `7-5`). */
function canonical(id: string): string {
  const ref = parseFireId(id);
  return ref ? fireId(BigInt(ref.timerId).toString(), ref.runAt) : id;
}

function toView(app: string, l: DeadLetter): DeadLetterView {
  return {
    fireId: fireId(l.timerId, l.runAt),
    timerId: l.timerId,
    app,
    runAt: l.runAt,
    failedAt: l.failedAt,
    attempts: l.attempts,
    reason: l.reason,
    error: l.error,
    httpStatus: l.httpStatus,
  };
}
