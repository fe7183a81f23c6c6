/**
 * MigratorService against real MariaDB (a fresh migrated database) and Redis (DB 1, own key prefix),
 * with a fixed clock next year (the slice index expires keys by Redis's real clock).
 */
import { Logger } from '@nestjs/common';
import Redis from 'ioredis';
import { Registry } from 'prom-client';
import { DataSource } from 'typeorm';
import { dataSourceOptions, MigratorWindowRepository, NewTask, runMigrations, SliceTaskRepository, TaskRepository, TimerRepository, TimerStatus } from '@timer/dal';
import { ExecutorLag, FireClaims, RedisLock, SliceIndex, TriggerSlots } from '@timer/redis';
import { Clock } from '@timer/platform';
import { FireRegenerator, FireRows, FireWriter } from '@timer/fire';
import { fireTimesBetween } from '@timer/schedule';
import { deleteKeys, testEnv, uniqueId } from '@timer/testing';
import { MigratorConfig, MigratorEnv } from '../src/config/migrator.env';
import { ExpansionPacer } from '../src/migration/expansion-pacer';
import { MigratorMetrics } from '../src/migration/migrator.metrics';
import { MigratorService, TimerSource, WindowOutcome } from '../src/migration/migrator.service';
import { minuteOf, NEAR_NOW_MS, TaskMessage } from '@timer/contracts';

jest.setTimeout(60_000);

const W = 10 * 60_000; // 10-minute windows keep the seconds-level timer's fires few
const T0 = Date.UTC(new Date().getUTCFullYear() + 1, 5, 1, 10, 0); // a window start
const NOW = T0 + 4 * 60_000 + 321; // inside the first window
const CALLBACK = { url: 'https://example.com/hook', method: 'POST' };

describe('migrator against MariaDB and Redis', () => {
  const id = uniqueId('mig');
  const database = `timer_test_${id}`;
  let admin: DataSource;
  let db: DataSource;
  let redis: Redis;
  let prefix: string;
  const redisClients: Redis[] = [];

  beforeAll(async () => {
    Logger.overrideLogger(false); // the crash test logs an expected error
    const base = new URL(testEnv().mysqlUrl);
    const url = Object.assign(new URL(base.toString()), { pathname: `/${database}` }).toString();
    admin = new DataSource({ ...dataSourceOptions(base.toString(), 1), migrations: [], entities: [] });
    await admin.initialize();
    await admin.query(`CREATE DATABASE \`${database}\``);
    await runMigrations(url);
    db = new DataSource(dataSourceOptions(url, 6));
    await db.initialize();
    redis = new Redis(testEnv().redisUrl, { maxRetriesPerRequest: 1 });
  });

  beforeEach(async () => {
    prefix = `${uniqueId('mig')}:`;
    for (const t of ['tasks', 'timers', 'migrator_windows']) await db.query(`DELETE FROM ${t}`);
  });

  afterEach(() => deleteKeys(redis, prefix));

  afterAll(async () => {
    Logger.overrideLogger(['error', 'warn', 'log']);
    await Promise.all(redisClients.map((c) => c.quit()));
    await redis?.quit();
    await db?.destroy();
    await admin?.query(`DROP DATABASE IF EXISTS \`${database}\``);
    await admin?.destroy();
  });

  /** Task messages of fires already due (the pipeline e2e tests publish them on the real broker). */
  const dueFires = {
    published: [] as string[],
    publish: async (t: TaskMessage) => void dueFires.published.push(t.fireId),
    publishBatch: async (ts: readonly TaskMessage[]) => void dueFires.published.push(...ts.map((t) => t.fireId)),
  };

  /**
   * A migrator "process": its own Redis connection, lock and index, like a replica. With `paced`, its
   * expansions are paced by the executors' lag in Redis, on that clock.
   */
  function migrator(
    opts: {
      pageSize?: number;
      now?: number;
      tasks?: FireRows;
      timers?: TimerSource;
      bucketFires?: number;
      paced?: { clock: Clock; metrics: MigratorMetrics; env?: Partial<MigratorEnv> };
      /** Bound the buckets by the trigger slots reported in Redis (as in production). */
      triggers?: boolean;
    } = {},
  ): MigratorService {
    const client = new Redis(testEnv().redisUrl, { maxRetriesPerRequest: 1 });
    redisClients.push(client);
    const env = Object.assign(new MigratorEnv(), { TIMER_WINDOW_MINUTES: W / 60_000, TIMER_MIGRATOR_PAGE_SIZE: opts.pageSize ?? 500 }, opts.paced?.env);
    const clock = opts.paced?.clock ?? { now: () => opts.now ?? NOW };
    const metrics = opts.paced?.metrics ?? new MigratorMetrics(new Registry());
    const pacer = opts.paced && new ExpansionPacer(new ExecutorLag(client, prefix), new TimerRepository(db), opts.paced.clock, new MigratorConfig(env), metrics);
    const index = new SliceIndex(client, prefix, opts.bucketFires === undefined ? {} : { bucketFires: opts.bucketFires, maxBuckets: 64 });
    const writer = new FireWriter(opts.tasks ?? new TaskRepository(db), index, dueFires, clock);
    return new MigratorService(
      new MigratorWindowRepository(db),
      opts.timers ?? new TimerRepository(db),
      writer,
      new RedisLock(client, prefix),
      clock,
      new MigratorConfig(env),
      metrics,
      regenerator(client),
      index,
      undefined,
      pacer,
      opts.triggers ? new TriggerSlots(client, prefix) : undefined,
    );
  }

  function regenerator(client: Redis): FireRegenerator {
    const index = new SliceIndex(client, prefix);
    return new FireRegenerator(new TaskRepository(db), new FireWriter(new TaskRepository(db), index, dueFires, { now: () => NOW }), index, new TimerRepository(db), db, new FireClaims(client, prefix));
  }

  /** An enabled timer whose fires before `nextFireAt` exist (default: none yet from the first window on). */
  async function enabled(name: string, schedule: { cron?: string; runAt?: number }, nextFireAt = T0): Promise<string> {
    const timers = new TimerRepository(db);
    const t = await timers.create({ app: 'mig-app', name, ...schedule, notifyHttpParam: CALLBACK, status: TimerStatus.Enabled });
    await timers.setNextFireAt(t.id, nextFireAt);
    return t.id;
  }

  const nextFireOf = async (id: string) => Number((await new TimerRepository(db).findLive('mig-app', id))!.nextFireAt);

  async function rows(): Promise<string[]> {
    const r: { timer_id: string | number; run_at: string | number; status: number }[] = await db.query('SELECT timer_id, run_at, status FROM tasks');
    return r.map((x) => `${x.timer_id}-${x.run_at}`).sort();
  }

  /** Every index entry as `<slice key>|<member>`, with its score checked against the member. */
  async function members(): Promise<string[]> {
    const out: string[] = [];
    for (const key of await redis.keys(`${prefix}slice:*`)) {
      const z = await redis.zrange(key, 0, -1, 'WITHSCORES');
      for (let i = 0; i < z.length; i += 2) {
        expect(z[i].endsWith(`-${z[i + 1]}`)).toBe(true);
        out.push(`${key}|${z[i]}`);
      }
    }
    return out.sort();
  }

  function expectedMembers(fires: string[]): string[] {
    const index = new SliceIndex(redis, prefix);
    return fires
      .map((f) => {
        const [timerId, runAt] = f.split('-');
        const minute = minuteOf(Number(runAt));
        return `${index.sliceKey(minute, index.bucketOf(timerId, 10))}|${f}`;
      })
      .sort();
  }

  /**
   * Where each expected fire went: the index for fires due after NOW + NEAR_NOW_MS, a task message
   * (published at once: the walk may be past them) for the ones due sooner.
   */
  async function expectStored(expected: string[]): Promise<void> {
    const due = (f: string) => Number(f.split('-')[1]) <= NOW + NEAR_NOW_MS;
    expect(await members()).toEqual(expectedMembers(expected.filter((f) => !due(f))));
    const published = new Set(dueFires.published);
    expect(expected.filter((f) => due(f) && !published.has(f))).toEqual([]);
  }

  function expectedFires(timers: Record<string, string>, from: number, to: number): string[] {
    return Object.entries(timers)
      .flatMap(([timerId, cron]) => fireTimesBetween({ cron, timeZone: 'UTC' }, from, to).map((t) => `${timerId}-${t}`))
      .sort();
  }

  const statuses = (o: WindowOutcome[]) => o.map((x) => [(x.window.start - T0) / W, x.status]);

  it('creates exactly the fires of a seconds-level and a minute-level timer for the current and next two windows; a second run adds nothing', async () => {
    const sec = await enabled('every-10s', { cron: '*/10 * * * * *' });
    const min = await enabled('every-minute', { cron: '* * * * *' });
    const once = await enabled('one-shot', { runAt: T0 + W + 12_345 });
    const late = await enabled('one-shot-beyond', { runAt: T0 + 3 * W + 1 });

    const first = await migrator().tick();
    expect(statuses(first)).toEqual([
      [0, 'completed'],
      [1, 'completed'],
      [2, 'completed'],
    ]);
    const expected = [...expectedFires({ [sec]: '*/10 * * * * *', [min]: '* * * * *' }, T0, T0 + 3 * W), `${once}-${T0 + W + 12_345}`].sort();
    expect(expected).toHaveLength(3 * 60 + 3 * 10 + 1);
    expect(await rows()).toEqual(expected);
    await expectStored(expected);
    expect((await rows()).some((r) => r.startsWith(`${late}-`))).toBe(false);
    expect(first.reduce((n, o) => n + (o.status === 'completed' ? o.inserted : 0), 0)).toBe(expected.length);
    const windows: { window_start: string | number }[] = await db.query('SELECT window_start FROM migrator_windows ORDER BY window_start');
    expect(windows.map((w) => Number(w.window_start))).toEqual([T0, T0 + W, T0 + 2 * W]);

    // Same time again (a restart, another tick): nothing to do, nothing added.
    expect(await migrator().tick()).toEqual([]);
    // A forced re-run of a completed window reads no timer (each moved past it) and inserts nothing.
    await db.query('DELETE FROM migrator_windows WHERE window_start = ?', [T0 + W]);
    const rerun = await migrator().tick();
    expect(rerun).toEqual([expect.objectContaining({ status: 'completed', inserted: 0, timers: 0 })]);
    // Read again from an earlier next fire (the value an edit or a resolve may leave), it writes nothing twice.
    await db.query('UPDATE timers SET next_fire_at = ? WHERE id IN (?, ?)', [T0, sec, min]);
    await db.query('DELETE FROM migrator_windows WHERE window_start = ?', [T0 + 2 * W]);
    expect(await migrator().tick()).toEqual([expect.objectContaining({ status: 'completed', inserted: 0, timers: 2, fires: 3 * 60 + 3 * 10 })]);
    expect(await rows()).toEqual(expected);
    await expectStored(expected);
  });

  /** The fires of a minute found by walking each of its buckets, in the index and in MySQL, as the trigger does. */
  async function walk(minute: number, buckets: number): Promise<{ index: string[]; mysql: string[] }> {
    const index = new SliceIndex(redis, prefix);
    const slices = new SliceTaskRepository(db);
    const out = { index: [] as string[], mysql: [] as string[] };
    for (let bucket = 0; bucket < buckets; bucket++) {
      out.index.push(...(await index.due(minute, bucket, minute, minute + 60_000)).map((f) => `${f.timerId}-${f.runAt}`));
      out.mysql.push(...(await slices.pendingInSlice({ fromMs: minute, toMs: minute + 60_000, bucket, buckets })).map((f) => `${f.timerId}-${f.runAt}`));
    }
    return { index: out.index.sort(), mysql: out.mysql.sort() };
  }

  describe('bucket count of a minute', () => {
    const heavyMinute = T0 + W + 5 * 60_000; // 10:15, in the second window
    const lightMinute = heavyMinute + 60_000;

    /** 45 timers firing once in the heavy minute (spread over its seconds) and one in the light minute. */
    async function heavyAndLight(): Promise<{ heavy: string[]; light: string[] }> {
      const heavy: string[] = [];
      for (let i = 0; i < 45; i++) {
        const id = await enabled(`heavy-${i}`, { cron: `${i} 15 10 * * *` });
        heavy.push(`${id}-${heavyMinute + i * 1000}`);
      }
      const light = [`${await enabled('light', { cron: '30 16 10 * * *' })}-${lightMinute + 30_000}`];
      return { heavy: heavy.sort(), light };
    }

    it('follows the fires: recorded before indexing, more buckets for a heavy minute, every fire in the bucket the trigger walks, never changed', async () => {
      const { heavy, light } = await heavyAndLight();
      expect(statuses(await migrator({ bucketFires: 20 }).tick())).toEqual([
        [0, 'completed'],
        [1, 'completed'],
        [2, 'completed'],
      ]);
      // 10 + floor(45 / 20) = 12; the light and the empty minutes keep the default.
      expect(await redis.get(`${prefix}slice-buckets:${heavyMinute}`)).toBe('12');
      expect(await redis.get(`${prefix}slice-buckets:${lightMinute}`)).toBe('10');
      expect(await redis.get(`${prefix}slice-buckets:${T0 + 2 * W}`)).toBe('10');
      expect(await walk(heavyMinute, 12)).toEqual({ index: heavy, mysql: heavy });
      expect(await walk(lightMinute, 10)).toEqual({ index: light, mysql: light });
      // The heavy minute's fires use buckets beyond the default's 10.
      expect((await redis.keys(`${prefix}slice:${heavyMinute}:*`)).map((k) => Number(k.split(':').pop())).some((b) => b >= 10)).toBe(true);
      // A re-run with another policy (every window forced again) changes no recorded count.
      await db.query('DELETE FROM migrator_windows');
      await migrator({ bucketFires: 1 }).tick();
      expect(await redis.get(`${prefix}slice-buckets:${heavyMinute}`)).toBe('12');
      expect(await walk(heavyMinute, 12)).toEqual({ index: heavy, mysql: heavy });
    });

    it('gives a heavy minute no more buckets than the live triggers can walk', async () => {
      const { heavy } = await heavyAndLight();
      const slots = new TriggerSlots(redis, prefix);
      /** Every window run again from nothing: no fire row, no index entry, no count, every timer's fires still to write. */
      const again = async () => {
        await db.query('DELETE FROM migrator_windows');
        await db.query('DELETE FROM tasks');
        await db.query('UPDATE timers SET next_fire_at = ?', [T0]);
        const keys = await redis.keys(`${prefix}slice*`);
        if (keys.length > 0) await redis.del(...keys);
        await migrator({ bucketFires: 1, triggers: true }).tick();
      };
      // No trigger reported: the default (10 + 45 fires would ask for 55).
      await again();
      expect(await redis.get(`${prefix}slice-buckets:${heavyMinute}`)).toBe('10');
      expect(await walk(heavyMinute, 10)).toEqual({ index: heavy, mysql: heavy });

      // Two triggers of 32 slots: losing one leaves 32, a third of which is below the default.
      await slots.report('trigger-a', 32, NOW);
      await slots.report('trigger-b', 32, NOW);
      await again();
      expect(await redis.get(`${prefix}slice-buckets:${heavyMinute}`)).toBe('10');

      // Three: a third of the 64 slots left without one, 21.
      await slots.report('trigger-c', 32, NOW);
      await again();
      expect(await redis.get(`${prefix}slice-buckets:${heavyMinute}`)).toBe('21');
      expect(await redis.get(`${prefix}slice-buckets:${lightMinute}`)).toBe('11');
      expect(await walk(heavyMinute, 21)).toEqual({ index: heavy, mysql: heavy });
    });

    it('keeps the default a scheduler recorded first, and indexes every fire in its buckets', async () => {
      const { heavy } = await heavyAndLight();
      expect(await new SliceIndex(redis, prefix).buckets(heavyMinute)).toBe(10); // the scheduler's offer, first
      await migrator({ bucketFires: 20 }).tick();
      expect(await redis.get(`${prefix}slice-buckets:${heavyMinute}`)).toBe('10');
      expect(await walk(heavyMinute, 10)).toEqual({ index: heavy, mysql: heavy });
    });
  });

  it('skips a window recorded as completed; a timer whose next fire lies in it still gets those fires', async () => {
    const min = await enabled('every-minute', { cron: '* * * * *' });
    const after = await enabled('every-minute-after', { cron: '* * * * *' }, T0 + 2 * W); // its fires before exist
    await new MigratorWindowRepository(db).markCompleted(T0 + W, T0 + 2 * W);
    const outcomes = await migrator().tick();
    expect(statuses(outcomes)).toEqual([
      [0, 'completed'],
      [2, 'completed'],
    ]);
    // A window completed by another replica before this one reached the timer (out of order) must not
    // lose its fires: the next window reads the timer from its next fire, whatever window that is in.
    const expected = [...expectedFires({ [min]: '* * * * *' }, T0, T0 + 3 * W), ...expectedFires({ [after]: '* * * * *' }, T0 + 2 * W, T0 + 3 * W)].sort();
    expect(await rows()).toEqual(expected);
    await expectStored(expected);
  });

  it('a restart after a crash mid-window (after the first page) completes it without duplicates', async () => {
    const crons: Record<string, string> = {};
    for (let i = 0; i < 3; i++) crons[await enabled(`t${i}`, { cron: i === 0 ? '*/10 * * * * *' : '* * * * *' })] = i === 0 ? '*/10 * * * * *' : '* * * * *';
    const real = new TaskRepository(db);
    let calls = 0;
    const crashing: FireRows = {
      insertIgnore: async (batch: NewTask[]) => {
        if (++calls === 2) throw new Error('process died here (injected after the first page)');
        return real.insertIgnore(batch);
      },
    };
    const crashed = await migrator({ pageSize: 1, tasks: crashing }).migrateWindow({ start: T0, end: T0 + W });
    expect(crashed.status).toBe('failed');
    const [firstTimer] = Object.keys(crons);
    const partial = await rows();
    expect(partial).toEqual(expectedFires({ [firstTimer]: crons[firstTimer] }, T0, T0 + W));
    expect(await new MigratorWindowRepository(db).isCompleted(T0)).toBe(false);
    // The lock was released in `finally`: the restarted process takes the window at once.
    expect(await redis.exists(`${prefix}lock:migrate:${T0}`)).toBe(0);

    const restarted = await migrator({ pageSize: 1 }).tick();
    expect(statuses(restarted)).toEqual([
      [0, 'completed'],
      [1, 'completed'],
      [2, 'completed'],
    ]);
    const expected = expectedFires(crons, T0, T0 + 3 * W);
    // The first timer moved past the window once its fires were written: only the other two are read again.
    expect(restarted[0]).toMatchObject({ timers: 2, fires: 10 + 10, inserted: 20 });
    expect(await rows()).toEqual(expected);
    const [{ n, d }]: { n: number | string; d: number | string }[] = await db.query('SELECT COUNT(*) AS n, COUNT(DISTINCT timer_id, run_at) AS d FROM tasks');
    expect(Number(n)).toBe(expected.length);
    expect(Number(d)).toBe(expected.length);
    await expectStored(expected);
  });

  it('two migrators in parallel work each window once and create no duplicates', async () => {
    const crons: Record<string, string> = {};
    for (let i = 0; i < 30; i++) crons[await enabled(`p${i}`, { cron: i % 2 === 0 ? '*/10 * * * * *' : '* * * * *' })] = i % 2 === 0 ? '*/10 * * * * *' : '* * * * *';
    const [a, b] = await Promise.all([migrator({ pageSize: 4 }).tick(), migrator({ pageSize: 4 }).tick()]);
    const expected = expectedFires(crons, T0, T0 + 3 * W);
    for (let i = 0; i < 3; i++) {
      const byWindow = [...a, ...b].filter((o) => o.window.start === T0 + i * W);
      // Each window was worked by exactly one of them; the other found it locked or already completed.
      expect(byWindow.filter((o) => o.status === 'completed')).toHaveLength(1);
      expect(byWindow.every((o) => ['completed', 'busy', 'already-completed'].includes(o.status))).toBe(true);
    }
    const inserted = [...a, ...b].reduce((n, o) => n + (o.status === 'completed' ? o.inserted : 0), 0);
    expect(inserted).toBe(expected.length);
    expect(await rows()).toEqual(expected);
    await expectStored(expected);
    // A window one of them found busy is completed by the next tick if it is not already.
    expect(await migrator().tick()).toEqual([]);
  });

  it('does not create fires of a timer from before it was enabled when the current window runs late', async () => {
    // The timer was enabled (updated_at) now, in real time; a migrator whose clock is in that same window
    // creates its fires only from then on.
    const realNow = Date.now();
    const windowStart = Math.floor(realNow / W) * W;
    const sec = await enabled('late-window', { cron: '* * * * * *' }, windowStart);
    const outcome = await migrator({ now: realNow + 1000 }).migrateWindow({ start: windowStart, end: windowStart + W });
    expect(outcome.status).toBe('completed');
    const fires = (await rows()).map((r) => Number(r.split('-')[1]));
    const [{ u }]: { u: Date }[] = await db.query('SELECT updated_at AS u FROM timers WHERE id = ?', [sec]);
    expect(Math.min(...fires)).toBeGreaterThanOrEqual(new Date(u).getTime());
    expect(Math.max(...fires)).toBeLessThan(windowStart + W);
  });

  it('a timer edited between the page read and the write keeps only the fires of its new definition (the fence)', async () => {
    const id = await enabled('edited-mid-window', { cron: '*/10 * * * * *' });
    const timers = new TimerRepository(db);
    let edited = false;
    // Every minute's bucket count recorded already: the migrator reads no timers to count them, so
    // its first read is the expansion's.
    const minutes = new Map<number, number>();
    for (let m = T0; m < T0 + 3 * W; m += 60_000) minutes.set(m, 0);
    await new SliceIndex(redis, prefix).recordBuckets(minutes);
    // The edit commits right after the migrator read the page (old definition): as the api does it.
    const racing: TimerSource = {
      advanceNextFire: (a) => timers.advanceNextFire(a),
      resolveUnknownNextFire: (from, limit) => timers.resolveUnknownNextFire(from, limit),
      duePage: async (before, after, limit, ids) => {
        const page = await timers.duePage(before, after, limit, ids);
        if (!edited && page.some((t) => t.id === id)) {
          edited = true;
          const regen = regenerator(redis);
          const r = await db.transaction(async (m) => {
            const t = (await timers.findLiveForUpdate('mig-app', id, m))!;
            await timers.update('mig-app', id, { ...t, cron: '*/15 * * * * *' }, m);
            return regen.regenerate((await timers.findLiveForUpdate('mig-app', id, m))!, { fromMs: NOW, createUntilMs: T0 + 3 * W }, m);
          });
          await regen.afterCommit(r);
        }
        return page;
      },
    };
    await migrator({ timers: racing }).tick();
    expect(edited).toBe(true);
    const stored: { run_at: string | number; status: number; error: string | null }[] = await db.query(
      'SELECT run_at, status, error FROM tasks WHERE timer_id = ? AND run_at >= ? ORDER BY run_at',
      [id, NOW],
    );
    const pending = stored.filter((r) => r.status === 0).map((r) => Number(r.run_at));
    expect(pending).toEqual(fireTimesBetween({ cron: '*/15 * * * * *', timeZone: 'UTC' }, NOW, T0 + 3 * W));
    const superseded = stored.filter((r) => r.status === 4);
    expect(superseded.length).toBeGreaterThan(0);
    expect(superseded.every((r) => r.error === 'superseded by version 2' && Number(r.run_at) % 15_000 !== 0)).toBe(true);
    // The index holds the new definition's fires only.
    const indexed = (await members()).map((m) => m.split('|')[1]).filter((f) => f.startsWith(`${id}-`));
    expect(indexed.sort()).toEqual(pending.filter((t) => t > NOW + NEAR_NOW_MS).map((t) => `${id}-${t}`).sort());
    // The edit's next fire (after what it created), not the migrator's advance of the old definition.
    expect(await nextFireOf(id)).toBe(T0 + 3 * W);
  });

  it('reads in each window only the timers with a fire in it, and moves each to its next fire', async () => {
    const often = await enabled('often', { cron: '0 */5 * * * *' });
    const daily = await enabled('daily', { cron: '0 5 10 * * *' }); // 10:05 UTC, in the first window only
    const later = await enabled('later', { cron: '0 5 10 * * *' }, T0 + 86_400_000 + 5 * 60_000); // its fires before tomorrow exist
    const outcomes = await migrator().tick();
    expect(outcomes.map((o) => (o.status === 'completed' ? [o.timers, o.fires] : o.status))).toEqual([
      [2, 3],
      [1, 2],
      [1, 2],
    ]);
    expect(await rows()).toEqual([...expectedFires({ [often]: '0 */5 * * * *' }, T0, T0 + 3 * W), `${daily}-${T0 + 5 * 60_000}`].sort());
    expect([await nextFireOf(often), await nextFireOf(daily), await nextFireOf(later)]).toEqual([T0 + 3 * W, T0 + 86_400_000 + 5 * 60_000, T0 + 86_400_000 + 5 * 60_000]);
  });

  it('applies a timer\'s calendars to its windows: excluded fires written missed and not indexed, a fire of the next day moved into the window', async () => {
    const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
    const timers = new TimerRepository(db);
    const withCalendar = async (name: string, cron: string, excluded: number, onExcluded: string) => {
      const rules = [{ name: 'closed', timeZone: null, exclude: { dates: [day(excluded)] } }];
      const t = await timers.create({ app: 'mig-app', name, cron, notifyHttpParam: CALLBACK, status: TimerStatus.Enabled, calendars: ['closed'], calendarRules: rules, onExcluded });
      await timers.setNextFireAt(t.id, T0);
      return t.id;
    };
    // Today closed: every fire of the windows is recorded missed.
    const skipped = await withCalendar('skipped', '0 */5 * * * *', T0, 'skip');
    // Tomorrow closed: tomorrow's only fire (10:05) goes out today at 10:05, in the first window.
    const tomorrow = new Date(T0 + 86_400_000);
    const early = await withCalendar('early', `0 5 10 ${tomorrow.getUTCDate()} ${tomorrow.getUTCMonth() + 1} *`, tomorrow.getTime(), 'previousBusinessDay');
    await migrator().tick();
    const stored = (await db.query('SELECT timer_id, run_at, status, error FROM tasks ORDER BY timer_id, run_at')) as { timer_id: string | number; run_at: string | number; status: number; error: string | null }[];
    const of = (id: string) => stored.filter((r) => String(r.timer_id) === id).map((r) => [Number(r.run_at), r.status, r.error]);
    expect(of(skipped)).toEqual(fireTimesBetween({ cron: '0 */5 * * * *', timeZone: 'UTC' }, T0, T0 + 3 * W).map((t) => [t, 4, 'calendar closed']));
    expect(of(early)).toEqual([[T0 + 5 * 60_000, 0, null]]);
    await expectStored([`${early}-${T0 + 5 * 60_000}`]);
  });

  describe('paced by the executors\' lag', () => {
    const WINDOW = { start: T0 + 2 * W, end: T0 + 3 * W };
    const CRON = '* * * * * *';
    /** Virtual work: each row written takes this long on the test's clock. */
    const MS_PER_ROW = 0.1;

    /**
     * 50 every-second timers due in WINDOW (30,000 fires), a clock that moves with the rows written and
     * the pauses, and an executor that reports `lagMs` at every pause, as it does every second.
     */
    async function setup(lagMs: number) {
      const crons: Record<string, string> = {};
      for (let i = 0; i < 50; i++) crons[await enabled(`paced${i}`, { cron: CRON }, WINDOW.start)] = CRON;
      const lag = new ExecutorLag(redis, prefix);
      const clock = {
        t: NOW,
        pauses: 0,
        onPause: () => undefined as void,
        now: () => clock.t,
        sleep: async (ms: number) => {
          clock.t += ms;
          clock.pauses++;
          clock.onPause();
          await lag.report('executor-a', lagMs, clock.t);
        },
      };
      await lag.report('executor-a', lagMs, clock.t);
      const real = new TaskRepository(db);
      const batches: number[] = [];
      /** Each chunk's start and end on the clock. */
      const spans: [number, number][] = [];
      const tasks: FireRows = {
        insertIgnore: async (batch: NewTask[]) => {
          batches.push(batch.length);
          const start = clock.t;
          clock.t += batch.length * MS_PER_ROW;
          spans.push([start, clock.t]);
          return real.insertIgnore(batch);
        },
      };
      // The lag alone: no quiet part of the second (its own test below).
      const env: Partial<MigratorEnv> = { TIMER_MIGRATOR_PACE_QUIET_FOR_MS: 0 };
      return { crons, clock, tasks, batches, spans, env, metrics: new MigratorMetrics(new Registry()) };
    }

    const chunksBy = async (m: MigratorMetrics) => Object.fromEntries((await m.paceChunks.get()).values.map((v) => [v.labels.state, v.value]));

    it('writes a large window in full chunks without pause while the executors keep up', async () => {
      const s = await setup(50);
      const outcome = await migrator({ tasks: s.tasks, paced: s }).migrateWindow(WINDOW);
      expect(outcome).toMatchObject({ status: 'completed', fires: 30_000, inserted: 30_000 });
      // Whole timers of 600 fires: a chunk is written once it holds FLUSH_ROWS.
      expect(s.batches).toEqual([10_200, 10_200, 9_600]);
      expect(s.clock.pauses).toBe(0);
      // The last chunk leaves nothing of the estimate: nothing to pace.
      expect(await chunksBy(s.metrics)).toEqual({ idle: 2, unpaced: 1 });
    });

    it('slows down while the executors are late: smaller chunks and pauses, still done before its deadline', async () => {
      const s = await setup(5_000);
      const outcome = await migrator({ tasks: s.tasks, paced: s }).migrateWindow(WINDOW);
      expect(outcome).toMatchObject({ status: 'completed', fires: 30_000, inserted: 30_000 });
      // MIN_CHUNK_ROWS from the first chunk on (whole timers of 600 fires: 1,200).
      expect(s.batches).toEqual(Array<number>(25).fill(1_200));
      expect(s.clock.pauses).toBe(s.batches.length - 1);
      expect(await chunksBy(s.metrics)).toEqual({ late: 24, unpaced: 1 });
      const paused = (await s.metrics.pacePaused.get()).values[0].value;
      expect(paused).toBeGreaterThan(10);
      // TIMER_MIGRATOR_PACE_MAX_MS (120 s) from its start bounds it, well before the window's start.
      expect(s.clock.t).toBeLessThanOrEqual(NOW + 120_000);
      expect(await rows()).toEqual(expectedFires(s.crons, WINDOW.start, WINDOW.end));
    });

    it('writes at full speed however late the executors when pacing would miss the deadline', async () => {
      const s = await setup(60_000);
      // 30,000 rows take 3 s: with the safety factor the rest never fits in the 3 s it may take, so nothing waits.
      const outcome = await migrator({ tasks: s.tasks, paced: { ...s, env: { ...s.env, TIMER_MIGRATOR_PACE_MAX_MS: 3_000 } } }).migrateWindow(WINDOW);
      expect(outcome).toMatchObject({ status: 'completed', inserted: 30_000 });
      // Begun while late, its first chunk is the small one; from the speed it measured, full chunks.
      expect(s.batches).toEqual([1_200, 10_200, 10_200, 8_400]);
      expect(s.clock.pauses).toBe(0);
      expect(await chunksBy(s.metrics)).toEqual({ deadline: 3, unpaced: 1 });
    });

    it('writes each chunk inside the quiet part of a second, sized to fit it, while the executors keep up', async () => {
      const s = await setup(50);
      const quiet = { TIMER_MIGRATOR_PACE_QUIET_AT_MS: 250, TIMER_MIGRATOR_PACE_QUIET_FOR_MS: 500 };
      const outcome = await migrator({ tasks: s.tasks, paced: { ...s, env: quiet } }).migrateWindow(WINDOW);
      expect(outcome).toMatchObject({ status: 'completed', fires: 30_000, inserted: 30_000 });
      // Every chunk starts in the quiet part (x.250 to x.750). The first (no speed measured yet) may run
      // past it; at 0.1 ms a row the others hold at most 80 % of 500 ms (4,000 rows; whole timers of 600:
      // 4,200) and end inside it.
      expect(s.spans[0][0] % 1000).toBeGreaterThanOrEqual(250);
      expect(s.spans[0][0] % 1000).toBeLessThan(750);
      for (const [start, end] of s.spans.slice(1)) {
        expect(start % 1000).toBeGreaterThanOrEqual(250);
        expect(end - (start - (start % 1000))).toBeLessThanOrEqual(750);
      }
      expect(Math.max(...s.batches.slice(1))).toBeLessThanOrEqual(4_200);
      expect(s.clock.pauses).toBeGreaterThan(0);
      expect(await rows()).toEqual(expectedFires(s.crons, WINDOW.start, WINDOW.end));
    });

    it('stopped during a pause, it leaves the window incomplete, and a restart completes it without duplicates', async () => {
      const s = await setup(5_000);
      const service = migrator({ tasks: s.tasks, paced: s, pageSize: 20 });
      s.clock.onPause = () => {
        if (s.clock.pauses === 3) service.stop();
      };
      expect(await service.migrateWindow(WINDOW)).toMatchObject({ status: 'failed', error: 'stopping' });
      expect(await new MigratorWindowRepository(db).isCompleted(WINDOW.start)).toBe(false);
      expect(await redis.exists(`${prefix}lock:migrate:${WINDOW.start}`)).toBe(0);
      expect((await rows()).length).toBeGreaterThan(0);
      expect(await migrator().migrateWindow(WINDOW)).toMatchObject({ status: 'completed' });
      const expected = expectedFires(s.crons, WINDOW.start, WINDOW.end);
      expect(await rows()).toEqual(expected);
      await expectStored(expected);
    });
  });
});
