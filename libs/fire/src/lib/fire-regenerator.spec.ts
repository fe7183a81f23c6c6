import { Logger } from '@nestjs/common';
import { FireRef } from '@timer/contracts';
import { CALENDAR_PREFIX, NewTask, StoredFire, SUPERSEDED_PREFIX, TaskStatus, TaskStatusValue, TimerEntity, TimerStatus } from '@timer/dal';
import type { EntityManager } from 'typeorm';
import type { FireFence } from '@timer/redis';
import { FireRegenerator, SettledFences, StoredFires, TimerVersions, Transactions } from './fire-regenerator';
import { FireWriter } from './fire-writer';

const NOW = Date.UTC(2030, 0, 1, 10, 0, 0);
const M = {} as EntityManager;

const reopenable = (r: { status: number; error: string | null }) =>
  r.status === TaskStatus.Missed && ((r.error ?? '').startsWith(SUPERSEDED_PREFIX) || (r.error ?? '').startsWith(CALENDAR_PREFIX));

/** `tasks` of one process: status and error by `timerId-runAt`. */
class FakeTasks implements StoredFires {
  rows = new Map<string, { status: TaskStatusValue; error: string | null }>();
  async insertIgnore(fires: NewTask[]) {
    let n = 0;
    for (const f of fires) {
      const k = `${f.timerId}-${f.runAt}`;
      if (this.rows.has(k)) continue;
      this.rows.set(k, f.excluded === undefined ? { status: TaskStatus.Pending, error: null } : { status: TaskStatus.Missed, error: f.excluded });
      n++;
    }
    return n;
  }
  async firesForUpdate(timerId: string, fromMs: number, toMs: number | undefined): Promise<StoredFire[]> {
    return [...this.rows.entries()]
      .map(([k, r]) => ({ timerId: k.split('-')[0], runAt: Number(k.split('-')[1]), ...r }))
      .filter((r) => r.timerId === timerId && r.runAt >= fromMs && (toMs === undefined || r.runAt < toMs))
      .sort((a, b) => a.runAt - b.runAt)
      .map((r) => ({
        runAt: r.runAt,
        status: r.status,
        superseded: reopenable(r),
        ...(r.status === TaskStatus.Missed && (r.error ?? '').startsWith(CALENDAR_PREFIX) ? { excluded: r.error as string } : {}),
      }));
  }
  async supersede(timerId: string, runAts: number[], reason: string) {
    return this.update(timerId, runAts, (r) => r.status === TaskStatus.Pending, { status: TaskStatus.Missed, error: reason });
  }
  async reopenSuperseded(timerId: string, runAts: number[]) {
    return this.update(timerId, runAts, reopenable, { status: TaskStatus.Pending, error: null });
  }
  async exclude(timerId: string, runAts: number[], reason: string) {
    return this.update(timerId, runAts, (r) => r.status === TaskStatus.Pending || reopenable(r), { status: TaskStatus.Missed, error: reason });
  }
  async deletePendingAfter(timerId: string, afterMs: number, _m: EntityManager, beforeMs?: number) {
    let n = 0;
    for (const [k, r] of this.rows) {
      const [id, t] = [k.split('-')[0], Number(k.split('-')[1])];
      if (id !== timerId || r.status !== TaskStatus.Pending || t <= afterMs || (beforeMs !== undefined && t >= beforeMs)) continue;
      this.rows.delete(k);
      n++;
    }
    return n;
  }
  async deleteOpenFrom(timerId: string, fromMs: number) {
    let n = 0;
    for (const [k, r] of this.rows) {
      const [id, t] = [k.split('-')[0], Number(k.split('-')[1])];
      const open = r.status === TaskStatus.Pending || reopenable(r);
      if (id !== timerId || !open || t < fromMs) continue;
      this.rows.delete(k);
      n++;
    }
    return n;
  }
  private update(timerId: string, runAts: number[], where: (r: { status: number; error: string | null }) => boolean, set: { status: TaskStatusValue; error: string | null }) {
    let n = 0;
    for (const t of runAts) {
      const r = this.rows.get(`${timerId}-${t}`);
      if (!r || !where(r)) continue;
      this.rows.set(`${timerId}-${t}`, set);
      n++;
    }
    return n;
  }
  state(timerId: string, t: number) {
    return this.rows.get(`${timerId}-${t}`);
  }
}

class FakeIndex {
  members = new Set<string>();
  failRemove = false;
  async add(fires: FireRef[]) {
    for (const f of fires) this.members.add(`${f.timerId}-${f.runAt}`);
  }
  async remove(fires: FireRef[]) {
    if (this.failRemove) throw new Error('redis down');
    for (const f of fires) this.members.delete(`${f.timerId}-${f.runAt}`);
  }
  async removeTimer(timerId: string, fromMs: number, toMs: number) {
    if (this.failRemove) throw new Error('redis down');
    let n = 0;
    for (const m of [...this.members]) {
      const [id, t] = [m.split('-')[0], Number(m.split('-')[1])];
      if (id === timerId && t >= fromMs && t < toMs && this.members.delete(m)) n++;
    }
    return n;
  }
}

function timer(fields: Partial<TimerEntity> = {}): TimerEntity {
  return { id: '7', app: 'a', cron: '*/10 * * * * *', runAt: null, timeZone: 'UTC', status: TimerStatus.Enabled, deletedAt: null, version: 2, ...fields } as TimerEntity;
}

function setup(current: TimerEntity = timer()) {
  const tasks = new FakeTasks();
  const index = new FakeIndex();
  const published: string[] = [];
  const writer = new FireWriter(tasks, index, { publish: async (m) => void published.push(m.fireId), publishBatch: async (ms) => void published.push(...ms.map((m) => m.fireId)) }, { now: () => NOW });
  const stored = { current: current as TimerEntity | null, versions: new Map<string, number>(), nextFireAt: new Map<string, number | null>() };
  const timers: TimerVersions = {
    versionsOf: async () => stored.versions,
    findLiveForUpdate: async () => stored.current,
    setNextFireAt: async (id, at) => void stored.nextFireAt.set(id, at),
  };
  const transactions = { transaction: (fn: (m: EntityManager) => Promise<unknown>) => fn(M) } as unknown as Transactions;
  const fenced: FireFence[] = [];
  const fences: SettledFences = { fence: async (fs) => void fenced.push(...fs) };
  const regenerator = new FireRegenerator(tasks, writer, index, timers, transactions, fences);
  /** The fires of a cron in [from, to), as stored by enable or the migrator: rows and index. */
  const prepare = async (every: number, from: number, to: number) => {
    const fires: NewTask[] = [];
    for (let t = Math.ceil(from / every) * every; t < to; t += every) fires.push({ app: 'a', timerId: '7', runAt: t });
    await tasks.insertIgnore(fires);
    await index.add(fires);
  };
  return { tasks, index, published, regenerator, stored, prepare, fenced };
}

const pendingAt = (s: ReturnType<typeof setup>, from: number) =>
  [...s.tasks.rows.entries()]
    .filter(([k, r]) => r.status === TaskStatus.Pending && Number(k.split('-')[1]) >= from)
    .map(([k]) => Number(k.split('-')[1]))
    .sort((a, b) => a - b);

describe('FireRegenerator', () => {
  beforeAll(() => Logger.overrideLogger(false));
  afterAll(() => Logger.overrideLogger(['error', 'warn', 'log']));

  it('supersedes the pending fires the new schedule lacks, keeps the shared ones and creates the missing ones', async () => {
    const s = setup();
    await s.prepare(10_000, NOW - 30_000, NOW + 60_000); // every 10 s, some already in the past
    s.tasks.rows.set(`7-${NOW + 20_000}`, { status: TaskStatus.Running, error: null }); // claimed: finishes as claimed
    const r = await s.regenerator.regenerate(timer({ cron: '*/15 * * * * *', version: 3 }), { fromMs: NOW, createUntilMs: NOW + 60_000 }, M);
    // Pending from now on: the 15-s fires only; the running one and the past ones are untouched.
    expect(pendingAt(s, NOW)).toEqual([0, 15, 30, 45].map((x) => NOW + x * 1000));
    expect(s.tasks.state('7', NOW + 20_000)).toEqual({ status: TaskStatus.Running, error: null });
    expect(s.tasks.state('7', NOW - 10_000)).toEqual({ status: TaskStatus.Pending, error: null });
    expect(r.superseded.map((f) => f.runAt - NOW)).toEqual([10_000, 40_000, 50_000]);
    expect(s.tasks.state('7', NOW + 10_000)).toEqual({ status: TaskStatus.Missed, error: 'superseded by version 3' });
    expect(r.written).toBe(2); // 15 s and 45 s
    // The migrator reads the timer again from the new schedule's first fire after what was created.
    expect(s.stored.nextFireAt.get('7')).toBe(NOW + 60_000);
    // Due within NEAR_NOW_MS: left for afterCommit to publish; the rest indexed.
    expect(r.due).toEqual([]);
    await s.regenerator.afterCommit(r);
    // The index: the superseded fires out, the new ones in; the claimed one (20 s) stays as it was.
    expect([...s.index.members].filter((m) => Number(m.split('-')[1]) >= NOW).sort()).toEqual([0, 15, 20, 30, 45].map((x) => `7-${NOW + x * 1000}`));
    // A message of a superseded fire already on its way finds its first claim in Redis fenced.
    expect(s.fenced).toEqual([10_000, 40_000, 50_000].map((x) => ({ fireId: `7-${NOW + x}`, latestDue: NOW + x })));
  });

  it('records the fires a calendar now excludes missed with its name, and makes them pending again when it no longer does', async () => {
    const s = setup();
    await s.prepare(10_000, NOW, NOW + 60_000);
    // NOW is Tuesday 2030-01-01: a calendar that excludes it.
    const newYear = [{ name: 'new-year', timeZone: null, exclude: { dates: ['2030-01-01'] } }];
    const r = await s.regenerator.regenerate(timer({ cron: '*/10 * * * * *', calendarRules: newYear, onExcluded: 'skip' }), { fromMs: NOW, createUntilMs: NOW + 60_000 }, M);
    expect(pendingAt(s, NOW)).toEqual([]);
    expect(s.tasks.state('7', NOW + 10_000)).toEqual({ status: TaskStatus.Missed, error: 'calendar new-year' });
    expect(r).toMatchObject({ superseded: [], written: 0 });
    await s.regenerator.afterCommit(r);
    expect(s.fenced.map((f) => f.fireId)).toEqual([0, 10, 20, 30, 40, 50].map((x) => `7-${NOW + x * 1000}`));
    const back = await s.regenerator.regenerate(timer({ cron: '*/10 * * * * *', calendarRules: [{ ...newYear[0], exclude: { dates: ['2030-01-02'] } }] }), { fromMs: NOW, createUntilMs: NOW + 60_000 }, M);
    expect(pendingAt(s, NOW)).toEqual([0, 10, 20, 30, 40, 50].map((x) => NOW + x * 1000));
    expect(back.written).toBe(6);
  });

  it('brings back the fires an earlier edit superseded when the schedule has them again', async () => {
    const s = setup();
    await s.prepare(10_000, NOW, NOW + 60_000);
    await s.regenerator.regenerate(timer({ cron: '*/30 * * * * *', version: 3 }), { fromMs: NOW, createUntilMs: NOW + 60_000 }, M);
    expect(pendingAt(s, NOW)).toEqual([NOW, NOW + 30_000]);
    const back = await s.regenerator.regenerate(timer({ cron: '*/10 * * * * *', version: 4 }), { fromMs: NOW, createUntilMs: NOW + 60_000 }, M);
    expect(pendingAt(s, NOW)).toEqual([0, 10, 20, 30, 40, 50].map((x) => NOW + x * 1000));
    expect(back).toMatchObject({ superseded: [], written: 4 });
    await s.regenerator.afterCommit(back);
    for (const x of [20, 40, 50]) expect(s.index.members.has(`7-${NOW + x * 1000}`)).toBe(true);
  });

  it('creates nothing for a disabled timer, but supersedes and brings back as for an enabled one', async () => {
    const s = setup();
    await s.prepare(10_000, NOW, NOW + 30_000);
    const r = await s.regenerator.regenerate(timer({ cron: '*/20 * * * * *', status: TimerStatus.Disabled, version: 3 }), { fromMs: NOW, createUntilMs: NOW + 60_000 }, M);
    expect(r).toMatchObject({ written: 0, due: [] });
    expect(r.superseded.map((f) => f.runAt - NOW)).toEqual([10_000]);
    expect(pendingAt(s, NOW)).toEqual([NOW, NOW + 20_000]);
  });

  it('regenerates up to the last stored fire when a migrator prepared beyond the range asked for, and publishes fires due at once', async () => {
    const s = setup();
    await s.prepare(10_000, NOW + 5_000, NOW + 120_000);
    const r = await s.regenerator.regenerate(timer({ cron: '* * * * * *', version: 3 }), { fromMs: NOW, createUntilMs: NOW + 60_000 }, M);
    expect(pendingAt(s, NOW)).toHaveLength(111); // every second from now through the last stored fire (NOW + 110 s)
    expect(r.due.map((f) => f.runAt - NOW)).toEqual([0, 1000, 2000]);
    await s.regenerator.afterCommit(r);
    expect(s.published).toEqual([0, 1000, 2000].map((x) => `7-${NOW + x}`));
  });

  it("an edit's cut: the near future regenerated, later open fires deleted for the migrator, from where it reads the timer again", async () => {
    const s = setup();
    await s.prepare(10_000, NOW, NOW + 300_000); // every 10 s for 5 minutes, as stored before the edit
    s.tasks.rows.set(`7-${NOW + 200_000}`, { status: TaskStatus.Running, error: null }); // claimed: finishes as claimed
    s.tasks.rows.set(`7-${NOW + 250_000}`, { status: TaskStatus.Missed, error: 'superseded by version 2' }); // an earlier edit's
    const cut = NOW + 60_000;
    const r = await s.regenerator.regenerate(timer({ cron: '*/15 * * * * *', version: 3 }), { fromMs: NOW, toMs: cut, createUntilMs: cut, dropAfter: { indexUntilMs: NOW + 600_000 } }, M);
    expect(pendingAt(s, NOW)).toEqual([0, 15, 30, 45].map((x) => NOW + x * 1000));
    // After the cut: only the claimed fire's row is left (its message is on its way), and no index entry.
    expect([...s.tasks.rows.keys()].filter((k) => Number(k.split('-')[1]) >= cut)).toEqual([`7-${NOW + 200_000}`]);
    expect([...s.index.members].filter((m) => Number(m.split('-')[1]) >= cut)).toEqual([]);
    expect(s.stored.nextFireAt.get('7')).toBe(cut);
    // The new fires are indexed once the edit has committed, not before.
    expect(s.index.members.has(`7-${NOW + 15_000}`)).toBe(false);
    await s.regenerator.afterCommit(r);
    expect(s.index.members.has(`7-${NOW + 15_000}`)).toBe(true);
  });

  it('an edit whose cut cannot reach the slice index fails (rolled back by its transaction) rather than leave entries without rows', async () => {
    const s = setup();
    await s.prepare(10_000, NOW, NOW + 120_000);
    s.index.failRemove = true;
    await expect(
      s.regenerator.regenerate(timer({ cron: '*/15 * * * * *', version: 3 }), { fromMs: NOW, toMs: NOW + 60_000, createUntilMs: NOW + 60_000, dropAfter: { indexUntilMs: NOW + 600_000 } }, M),
    ).rejects.toThrow('redis down');
  });

  it('survives a slice index that cannot remove the superseded fires (they are settled in MySQL)', async () => {
    const s = setup();
    await s.prepare(10_000, NOW, NOW + 30_000);
    const r = await s.regenerator.regenerate(timer({ cron: '*/20 * * * * *', version: 3 }), { fromMs: NOW, createUntilMs: NOW + 30_000 }, M);
    s.index.failRemove = true;
    await expect(s.regenerator.afterCommit(r)).resolves.toBeUndefined();
  });

  it('recheck regenerates only the timers of a page whose version moved since it was read', async () => {
    const edited = timer({ cron: '*/20 * * * * *', version: 3 });
    const s = setup(edited);
    await s.prepare(10_000, NOW, NOW + 60_000); // what the migrator wrote from the old definition
    s.stored.versions = new Map([['7', 3]]);
    expect(await s.regenerator.recheck([timer({ version: 3 })], NOW, NOW + 60_000)).toBe(0);
    expect(pendingAt(s, NOW)).toHaveLength(6);
    expect(await s.regenerator.recheck([timer({ version: 2 })], NOW, NOW + 60_000)).toBe(1);
    expect(pendingAt(s, NOW)).toEqual([NOW, NOW + 20_000, NOW + 40_000]);
    // A timer deleted meanwhile: nothing to regenerate (the executor records its fires missed).
    s.stored.current = null;
    expect(await s.regenerator.recheck([timer({ version: 1 })], NOW, NOW + 60_000)).toBe(1);
  });

  it('recheck deletes again the fires it wrote for a timer disabled meanwhile, and drops them from the index', async () => {
    const s = setup(timer({ status: TimerStatus.Disabled, version: 3 }));
    await s.prepare(10_000, NOW - 20_000, NOW + 90_000); // the migrator's write landed after the disable
    s.tasks.rows.set(`7-${NOW + 30_000}`, { status: TaskStatus.Running, error: null }); // claimed: left alone
    s.stored.versions = new Map([['7', 3]]);
    expect(await s.regenerator.recheck([timer({ version: 2 })], NOW, NOW + 60_000)).toBe(1);
    // In the range only: pending fires before it (due) and after it (another window's) are not this recheck's.
    expect(pendingAt(s, NOW - 20_000)).toEqual([NOW - 20_000, NOW - 10_000, NOW + 60_000, NOW + 70_000, NOW + 80_000]);
    expect(s.tasks.state('7', NOW + 30_000)).toEqual({ status: TaskStatus.Running, error: null });
    expect([...s.index.members].filter((m) => Number(m.split('-')[1]) >= NOW && Number(m.split('-')[1]) < NOW + 60_000).sort()).toEqual([`7-${NOW + 30_000}`]);
    expect(s.published).toEqual([]);
  });
});
