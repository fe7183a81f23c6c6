import { Logger } from '@nestjs/common';
import { FinishedCandidate, FinishedCursor } from '@timer/dal';
import { EntityManager } from 'typeorm';
import { MigratorConfig, MigratorEnv } from '../config/migrator.env';
import { COMPLETION_BATCH, CompletionService, FinishedTimers, Transactions, VersionSnapshots } from './completion.service';

const NOW = Date.UTC(2031, 0, 1);
const candidate = (i: number): FinishedCandidate => ({ id: String(i), app: 'a', finalAt: NOW - 1_000 + i });

describe('CompletionService', () => {
  let cursors: (FinishedCursor | null)[];
  let settled: Set<string>;
  let snapshots: string[];
  let pages: FinishedCandidate[][];
  let expandableFrom: number[];
  let service: CompletionService;

  beforeEach(() => {
    Logger.overrideLogger(false);
    cursors = [];
    settled = new Set();
    snapshots = [];
    expandableFrom = [];
    pages = [];
    const timers: FinishedTimers = {
      finishedCandidates: async (before, after) => {
        expect(before).toBe(NOW);
        cursors.push(after);
        return pages.shift() ?? [];
      },
      completeIfSettled: async (id, before, expandable) => {
        expect(before).toBe(NOW);
        expandableFrom.push(expandable);
        if (id === 'boom') throw new Error('deadlock');
        return settled.has(id);
      },
    };
    const versions: VersionSnapshots = { snapshot: async (id, change, at) => void snapshots.push(`${id} ${change} ${at}`) };
    const tx: Transactions = { transaction: ((fn: (m: EntityManager) => Promise<unknown>) => fn({} as EntityManager)) as Transactions['transaction'] };
    const config = new MigratorConfig(Object.assign(new MigratorEnv(), { TIMER_MIGRATOR_CATCHUP_MINUTES: 60 }));
    service = new CompletionService(timers, versions, tx, { now: () => NOW }, config);
  });

  it('completes the settled candidates with a version each, skips the others, and survives a failing one', async () => {
    pages = [[candidate(1), { id: 'boom', app: 'a', finalAt: NOW - 5 }, candidate(2), candidate(3)]];
    settled = new Set(['1', '3']);
    expect(await service.sweep()).toEqual({ checked: 4, completed: 2 });
    expect(snapshots).toEqual([`1 complete ${NOW}`, `3 complete ${NOW}`]);
    expect(new Set(expandableFrom)).toEqual(new Set([NOW - 3_600_000]));
  });

  it('goes on from where a full page stopped, and starts again after a short one', async () => {
    const full = Array.from({ length: COMPLETION_BATCH }, (_, i) => candidate(i));
    pages = [full, [candidate(9_999)], []];
    await service.sweep();
    await service.sweep();
    await service.sweep();
    const last = full[full.length - 1];
    expect(cursors).toEqual([null, { finalAt: last.finalAt, id: last.id }, null]);
  });
});
