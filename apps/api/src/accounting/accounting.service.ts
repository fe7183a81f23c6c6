import { Inject, Injectable } from '@nestjs/common';
import { windowOf } from '@timer/contracts';
import { LedgerRepository } from '@timer/dal';
import { CLOCK, NowClock } from '@timer/platform';
import { assertAppAccess, Principal } from '../auth/principal';
import { badRequest } from '../common/errors';
import { ApiConfig } from '../config/api.env';
import { AccountingQuery } from './dto/accounting.query';
import { AccountingData } from './dto/accounting.view';

/** The longest range one request may account for: 31 days. */
const MAX_RANGE_DAYS = 31;
export const MAX_ACCOUNTING_RANGE_MS = MAX_RANGE_DAYS * 86_400_000;
const DEFAULT_RANGE_MS = 86_400_000;

/**
 * Expected versus actual, per window (invariant 8): how many fires an app's windows hold and what
 * became of them, read from MySQL, the ledger. An operator proves nothing was dropped by checking
 * that every finished window has no open fire.
 */
@Injectable()
export class AccountingService {
  constructor(
    private readonly ledger: LedgerRepository,
    private readonly config: ApiConfig,
    @Inject(CLOCK) private readonly clock: NowClock,
  ) {}

  async accounting(p: Principal, q: AccountingQuery): Promise<AccountingData> {
    assertAppAccess(p, q.app);
    const now = this.clock.now();
    const windowMs = this.config.windowMs;
    const to = windowOf(Math.max(0, (q.to ?? windowOf(now, windowMs).end) - 1), windowMs).end;
    const from = windowOf(q.from ?? Math.max(0, to - DEFAULT_RANGE_MS), windowMs).start;
    if (from >= to) throw badRequest('from must be before to');
    if (to - from > MAX_ACCOUNTING_RANGE_MS) throw badRequest(`from..to spans more than ${MAX_RANGE_DAYS} days (${Math.ceil((to - from) / 86_400_000)} days): ask for a shorter range`);
    const rows = await this.ledger.accounting(q.app, from, to, windowMs);
    const windows = rows.map((w) => ({ ...w, settled: w.delivered + w.failed + w.missed, finished: w.windowEnd <= now }));
    return { app: q.app, windowMs, from, to, windows, unsettledFinished: windows.filter((w) => w.finished).reduce((n, w) => n + w.open, 0) };
  }
}
