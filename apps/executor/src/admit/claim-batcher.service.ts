import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { Clock, CLOCK } from '@timer/platform';
import { ClaimResult, FireClaimRepository, FireClaimRequest, OUTCOME_CHUNK } from '@timer/dal';
import { ExecutorMetrics } from '../shared/executor.metrics';
import { InstantDiagnostics } from '../shared/instant-diagnostics';

interface Pending {
  request: FireClaimRequest;
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
 * statement: under load, one UPDATE per hundred or so fires instead of one per fire
 * (docs/scaling.md, "Cost per fire, per role").
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
    @Optional() private readonly diag?: InstantDiagnostics,
  ) {}

  claim(request: FireClaimRequest): Promise<ClaimResult> {
    return new Promise<ClaimResult>((resolve, reject) => {
      this.queue.push({ request, resolve, reject });
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
      const batch = this.queue.splice(0, OUTCOME_CHUNK);
      this.inFlight++;
      void this.run(batch).finally(() => {
        this.inFlight--;
        this.schedule();
      });
    }
  }

  private async run(batch: Pending[]): Promise<void> {
    this.diag?.did('claim-batch', batch.length);
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
