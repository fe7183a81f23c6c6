import { Inject, Injectable, Logger } from '@nestjs/common';
import { Clock, CLOCK } from '@timer/platform';
import { ClaimResult, FireClaimRepository, FireClaimRequest, OUTCOME_CHUNK } from '@timer/dal';
import { DeliveryControl } from '../delivery-control/delivery-control.service';
import { ExecutorMetrics } from './executor.metrics';

interface Pending {
  request: FireClaimRequest;
  /** The fire's app, when known: claims of apps holding more than half their share go after the others'. */
  app?: string;
  resolve: (r: ClaimResult) => void;
  reject: (e: unknown) => void;
}

/** Claim statements in flight at once; what arrives meanwhile waits and goes in the next one. */
const MAX_IN_FLIGHT = 2;
/** Attempts of one batch (a deadlock or a dropped connection rolls the statement back whole). */
const CLAIM_ATTEMPTS = 3;

/**
 * Groups claims into one statement per batch (FireClaimRepository.claimMany). There is no timer: a claim
 * goes out on the next turn of the event loop when a statement slot is free, so a lone message pays
 * no added wait, and under load everything that arrived while the slots were busy shares the next
 * statement. At 5,000 fires/s this turns 5,000 single-row UPDATEs a second into a few dozen.
 *
 * Fair delivery: when claims of an app holding more than half its share (`AppFairShare.heavy`) wait
 * with other apps' claims, the others go first in a statement of their own. In the fairness bench the
 * slow app's first 500 fires were claimed at the instant the fast app's 100 were, in the same 500-row
 * statements, and the fast app's claims ended at their due time instead of ~85 ms before it (so their
 * call marks could not be taken during the wait either). An app alone is never heavy against itself:
 * its claims keep their order and batch size.
 */
@Injectable()
export class ClaimBatcher {
  private readonly logger = new Logger(ClaimBatcher.name);
  private queue: Pending[] = [];
  private inFlight = 0;
  private scheduled = false;

  constructor(
    private readonly claims: FireClaimRepository,
    private readonly metrics: ExecutorMetrics,
    @Inject(CLOCK) private readonly clock: Clock,
    private readonly control: DeliveryControl,
  ) {}

  claim(request: FireClaimRequest, app?: string): Promise<ClaimResult> {
    return new Promise<ClaimResult>((resolve, reject) => {
      this.queue.push({ request, app, resolve, reject });
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled || this.inFlight >= MAX_IN_FLIGHT || this.queue.length === 0) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.drain();
    });
  }

  private drain(): void {
    while (this.inFlight < MAX_IN_FLIGHT && this.queue.length > 0) {
      const batch = this.nextBatch();
      this.inFlight++;
      void this.run(batch).finally(() => {
        this.inFlight--;
        this.schedule();
      });
    }
  }

  /** Up to OUTCOME_CHUNK claims: those of apps not heavy now first, never mixed with a heavy app's while both wait. */
  private nextBatch(): Pending[] {
    const now = this.clock.now();
    const heavy = new Map<string, boolean>();
    const isHeavy = (p: Pending): boolean => {
      if (p.app === undefined) return false;
      let h = heavy.get(p.app);
      if (h === undefined) heavy.set(p.app, (h = this.control.shares.heavy(p.app, now)));
      return h;
    };
    const light: Pending[] = [];
    const rest: Pending[] = [];
    for (const p of this.queue) (isHeavy(p) ? rest : light).push(p);
    if (light.length === 0 || rest.length === 0) return this.queue.splice(0, OUTCOME_CHUNK);
    const batch = light.splice(0, OUTCOME_CHUNK);
    this.queue = light.concat(rest);
    return batch;
  }

  private async run(batch: Pending[]): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      try {
        const results = await this.claims.claimMany(batch.map((p) => p.request));
        this.metrics.claimBatchSize.observe(batch.length);
        batch.forEach((p, i) => p.resolve(results[i]));
        return;
      } catch (e) {
        if (attempt >= CLAIM_ATTEMPTS) {
          this.logger.error(`claiming ${batch.length} fires failed ${attempt} times; their messages are nacked: ${(e as Error).message}`);
          batch.forEach((p) => p.reject(e));
          return;
        }
        this.logger.warn(`claiming ${batch.length} fires failed (attempt ${attempt}), retrying: ${(e as Error).message}`);
        await this.clock.sleep(50 * 2 ** attempt);
      }
    }
  }
}
