/**
 * What the settled fires' bloom filter costs and what it saves (a command, not a test):
 *
 *   npm run bench:bloom -- [--items 200000] [--batch 500] [--fp 0.01] [--storm 20000] [--settled-share 1]
 *
 * Cost: on a Redis server of its own (started here like the local one: AOF, fsync every second, no
 * RDB; stopped at the end), --items fire ids of one minute added in --batch-item calls (as an outcome
 * batch adds them), then as many checked (half added, half not), through `SliceBloom`: per item, the
 * Redis process's CPU (/proc), this client's CPU and the AOF bytes, and per call the latency (p50/p99).
 * The same adds with one SETBIT per bit (the filter this project removed) for comparison.
 * Saving: a redelivery storm on a fresh MariaDB database (real migrations, dropped at the end): --storm
 * fires, a --settled-share of them settled, come back and are admitted in batches of 500 two ways:
 * claimed (today: one UPDATE, and a SELECT of the refused ones' state when any is refused) and
 * screened (the filter asked; "maybe" read with a plain SELECT, settled ones dropped; the rest
 * claimed). Per fire: MariaDB's CPU (Meter, idle rate out), statements (database round trips).
 * Writes .local/results/bloom-<time>.json and .md.
 */
import { ChildProcess, spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Redis from 'ioredis';
import { DataSource } from 'typeorm';
import { fireId } from '@timer/contracts';
import { FireClaimRepository, FireClaimRequest, FINISHED_TASK_STATUSES, TaskRepository, TaskStatus } from '@timer/dal';
import { bloomSize, packHashes, SliceBloom, SliceItem } from '@timer/redis';
import { markdownTable, numericFlags, procCpuSeconds, shortId, sleep, writeResults } from '../../e2e/support';
import { log, mariadbPid, Meter, withBenchDatabase } from '../db/meter';

const DEFAULTS = { items: 200_000, batch: 500, fp: 0.01, storm: 20_000, settledShare: 1 };
type Args = typeof DEFAULTS;
const MINUTE = 60_000;
const CLAIM_BATCH = 500;

// The filter this project removed: one SETBIT per bit, k bits an item, offsets computed by the client.
const SETBIT_ADD = `
local k = tonumber(ARGV[2])
local s = ARGV[3]
for j = 0, #s / (4 * k) - 1 do
  for i = 0, k - 1 do
    local a, b, c, d = string.byte(s, 1 + 4 * (j * k + i), 4 + 4 * (j * k + i))
    redis.call('setbit', KEYS[1], ((a * 256 + b) * 256 + c) * 256 + d, 1)
  end
end
if redis.call('pttl', KEYS[1]) < 0 then redis.call('pexpire', KEYS[1], ARGV[1]) end
return 1`;

/** A Redis server of the bench's own, configured as deploy/local/redis.sh starts the local one. */
async function ownRedis(): Promise<{ redis: Redis; pid: number; stop: () => Promise<void> }> {
  const dir = mkdtempSync(join(tmpdir(), 'bench-bloom-'));
  const socket = join(dir, 'redis.sock');
  // No AOF rewrite during the run: its forked child's CPU would not be seen, and it would not be the filter's.
  const child: ChildProcess = spawn('redis-server', ['--port', '0', '--unixsocket', socket, '--dir', dir, '--save', '', '--appendonly', 'yes', '--appendfsync', 'everysec', '--auto-aof-rewrite-percentage', '0'], { stdio: 'ignore' });
  for (let i = 0; !existsSync(socket); i++) {
    if (i > 100) {
      child.kill('SIGTERM');
      throw new Error(`redis-server did not open ${socket}`);
    }
    await sleep(50);
  }
  const redis = new Redis({ path: socket, maxRetriesPerRequest: 3 });
  await redis.ping();
  const pid = child.pid as number;
  return {
    redis,
    pid,
    stop: async () => {
      await redis.quit().catch(() => undefined);
      child.kill('SIGTERM');
      await new Promise((r) => child.once('exit', r));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const pct = (xs: number[], p: number) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length === 0 ? NaN : s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))];
};

interface Cost {
  what: string;
  items: number;
  redisUs: number;
  clientUs: number;
  aofBytes: number;
  callP50Ms: number;
  callP99Ms: number;
}

async function aofSize(redis: Redis): Promise<number> {
  await sleep(1_200); // everysec: the last second's writes reach the file
  const info = await redis.info('persistence');
  return Number(/aof_current_size:(\d+)/.exec(info)?.[1] ?? NaN);
}

/** Runs `call` on each batch of `items`, one after the other; per item Redis and client CPU, AOF bytes; per call latency. */
async function measure(what: string, redis: Redis, pid: number, items: SliceItem[], batch: number, call: (b: SliceItem[]) => Promise<unknown>): Promise<Cost> {
  const aof0 = await aofSize(redis);
  const r0 = procCpuSeconds(pid) as number;
  const c0 = process.cpuUsage();
  const lat: number[] = [];
  for (let i = 0; i < items.length; i += batch) {
    const t = process.hrtime.bigint();
    await call(items.slice(i, i + batch));
    lat.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  const c = process.cpuUsage(c0);
  const r = (procCpuSeconds(pid) as number) - r0;
  const aof = (await aofSize(redis)) - aof0;
  const n = items.length;
  return { what, items: n, redisUs: (r * 1e6) / n, clientUs: (c.user + c.system) / n, aofBytes: aof / n, callP50Ms: pct(lat, 50), callP99Ms: pct(lat, 99) };
}

async function costs(args: Args): Promise<{ costs: Cost[]; falsePositiveRate: number; bytes: number }> {
  const own = await ownRedis();
  try {
    const prefix = `bench:${shortId()}:`;
    const bloom = new SliceBloom(own.redis, prefix, { falsePositiveRate: args.fp });
    const minute = Math.floor(Date.now() / MINUTE) * MINUTE + MINUTE;
    const ids = (m: number, tag: string) => Array.from({ length: args.items }, (_, i) => ({ at: m + (i % MINUTE), id: `${tag}${i + 1}-${m + (i % MINUTE)}` }));
    const added = ids(minute, '');
    const out: Cost[] = [];
    out.push(await measure('add (BITFIELD, this filter)', own.redis, own.pid, added, args.batch, (b) => bloom.add(b, () => args.items)));
    const bytes = await own.redis.strlen(`${prefix}slice-bloom:${minute}`);
    const mixed = [...added.slice(0, args.items / 2), ...ids(minute, 'other-').slice(0, args.items / 2)];
    let maybes = 0;
    out.push(
      await measure('check (BITFIELD_RO)', own.redis, own.pid, mixed, args.batch, async (b) => {
        const answers = await bloom.check(b);
        maybes += answers.filter((a) => a === true).length;
      }),
    );
    const falsePositiveRate = (maybes - args.items / 2) / (args.items / 2);
    const size = bloomSize(args.items, args.fp);
    const sha = (await own.redis.script('LOAD', SETBIT_ADD)) as string;
    const old = ids(minute + MINUTE, '');
    out.push(
      await measure('add (one SETBIT a bit, removed)', own.redis, own.pid, old, args.batch, (b) => {
        const packed = Buffer.allocUnsafe(4 * size.hashes * b.length);
        const hashes = packHashes(b.map((x) => x.id));
        b.forEach((_, j) => {
          const h1 = hashes.readUInt32BE(8 * j);
          const h2 = hashes.readUInt32BE(8 * j + 4);
          for (let i = 0; i < size.hashes; i++) packed.writeUInt32BE((h1 + i * h2) % size.bits, 4 * (j * size.hashes + i));
        });
        return own.redis.evalsha(sha, 1, `${prefix}old:${minute}`, 3_600_000, size.hashes, packed);
      }),
    );
    return { costs: out, falsePositiveRate, bytes };
  } finally {
    await own.stop();
  }
}

interface Storm {
  path: string;
  fires: number;
  dbStatements: number;
  redisCalls: number;
  mariadbUs: number;
  dropped: number;
  claimed: number;
}

/** Claims as ClaimBatcher does; the number of statements it took (an UPDATE, and a SELECT when a claim was refused). */
async function claimAll(claims: FireClaimRepository, refs: { timerId: string; runAt: number }[], token: string): Promise<{ statements: number; claimed: number }> {
  if (refs.length === 0) return { statements: 0, claimed: 0 };
  const nowMs = Date.now();
  const requests: FireClaimRequest[] = refs.map((f, i) => ({ ...f, attempt: 1, token: `${token}:${i}`, nowMs, leaseMs: 60_000 }));
  const results = await claims.claimMany(requests);
  const claimed = results.filter((r) => r.claimed).length;
  return { statements: 1 + (claimed < refs.length ? 1 : 0), claimed };
}

async function storm(args: Args): Promise<Storm[]> {
  const own = await ownRedis();
  try {
    return await withBenchDatabase('bloom', async (db: DataSource) => {
      const meter = new Meter(mariadbPid(), db);
      const tasks = new TaskRepository(db);
      const claims = new FireClaimRepository(db);
      const bloom = new SliceBloom(own.redis, `bench:${shortId()}:`, { falsePositiveRate: args.fp });
      const base = Math.floor(Date.now() / MINUTE) * MINUTE + 10 * MINUTE;
      const settledCount = Math.round(args.storm * args.settledShare);
      // Each path gets its own minute of rows: the first `settledCount` settled (and, for the filter, added).
      const prepare = async (minute: number) => {
        const refs = Array.from({ length: args.storm }, (_, i) => ({ app: 'bench', timerId: String(i + 1), runAt: minute + (i % 60) * 1_000 }));
        await tasks.insertIgnore(refs);
        const settled = refs.slice(0, settledCount);
        for (let i = 0; i < settled.length; i += 1_000) {
          const chunk = settled.slice(i, i + 1_000);
          await db.query(`UPDATE tasks SET status = ?, attempt = 1, http_status = 200, claimed_by = 'settled' WHERE run_at BETWEEN ? AND ? AND timer_id IN (${chunk.map(() => '?').join(',')})`, [
            TaskStatus.Succeeded,
            minute,
            minute + MINUTE - 1,
            ...chunk.map((r) => r.timerId),
          ]);
        }
        return { refs, settled };
      };
      const a = await prepare(base);
      const b = await prepare(base + MINUTE);
      await bloom.add(b.settled.map((r) => ({ at: r.runAt, id: fireId(r.timerId, r.runAt) })), () => args.storm);
      await meter.calibrate();

      const out: Storm[] = [];
      let claimedA = 0;
      const mA = await meter.measure('claim', args.storm, async () => {
        let statements = 0;
        for (let i = 0; i < a.refs.length; i += CLAIM_BATCH) {
          const r = await claimAll(claims, a.refs.slice(i, i + CLAIM_BATCH), `a${i}`);
          statements += r.statements;
          claimedA += r.claimed;
        }
        return statements;
      });
      out.push({ path: 'claim (today)', fires: args.storm, dbStatements: mA.statements, redisCalls: 0, mariadbUs: mA.usPerFire, dropped: args.storm - claimedA, claimed: claimedA });

      let claimedB = 0;
      let dropped = 0;
      let redisCalls = 0;
      const mB = await meter.measure('screen', args.storm, async () => {
        let statements = 0;
        for (let i = 0; i < b.refs.length; i += CLAIM_BATCH) {
          const chunk = b.refs.slice(i, i + CLAIM_BATCH);
          const answers = await bloom.check(chunk.map((r) => ({ at: r.runAt, id: fireId(r.timerId, r.runAt) })));
          redisCalls++;
          const maybe = chunk.filter((_, j) => answers[j] === true);
          const toClaim = chunk.filter((_, j) => answers[j] !== true);
          if (maybe.length > 0) {
            const states = await claims.stateMany(maybe);
            statements++;
            maybe.forEach((r, j) => {
              const s = states[j];
              if (s !== null && FINISHED_TASK_STATUSES.includes(s.status)) dropped++;
              else toClaim.push(r);
            });
          }
          const c = await claimAll(claims, toClaim, `b${i}`);
          statements += c.statements;
          claimedB += c.claimed;
          dropped += toClaim.length - c.claimed;
        }
        return statements;
      });
      out.push({ path: 'screen (filter, then read or claim)', fires: args.storm, dbStatements: mB.statements, redisCalls, mariadbUs: mB.usPerFire, dropped, claimed: claimedB });

      // What a hand-back's settled check reads without the filter: one row, one statement a fire.
      const single = a.refs.slice(0, Math.min(2_000, a.refs.length));
      let c = { user: 0, system: 0 };
      const mC = await meter.measure('read', single.length, async () => {
        const c0 = process.cpuUsage();
        for (const r of single) await claims.state(r);
        c = process.cpuUsage(c0);
        return single.length;
      });
      out.push({ path: `one-row read (a hand-back's check; client ${((c.user + c.system) / single.length).toFixed(1)} µs)`, fires: single.length, dbStatements: mC.statements, redisCalls: 0, mariadbUs: mC.usPerFire, dropped: 0, claimed: 0 });
      return out;
    });
  } finally {
    await own.stop();
  }
}

async function main(): Promise<void> {
  const args = numericFlags(process.argv.slice(2), DEFAULTS);
  if (args.items < 2 || args.batch < 1 || !(args.fp > 0 && args.fp < 1) || args.storm < 1 || !(args.settledShare >= 0 && args.settledShare <= 1)) throw new Error('need --items >= 2, --batch >= 1, 0 < --fp < 1, --storm >= 1, 0 <= --settled-share <= 1');
  log(`cost: ${args.items} items, ${args.batch} a call, sized for ${args.fp}`);
  const c = await costs(args);
  const costTable = markdownTable(
    ['what', 'items', 'Redis CPU µs an item', 'client CPU µs an item', 'AOF bytes an item', 'call p50 ms', 'call p99 ms'],
    c.costs.map((x) => [x.what, x.items, x.redisUs, x.clientUs, x.aofBytes, x.callP50Ms, x.callP99Ms]),
    2,
  );
  log(`storm: ${args.storm} redelivered fires, ${args.settledShare * 100} % settled`);
  const s = await storm(args);
  const stormTable = markdownTable(
    ['path', 'fires', 'database statements', 'Redis calls', 'MariaDB CPU µs a fire', 'dropped as settled', 'claimed'],
    s.map((x) => [x.path, x.fires, x.dbStatements, x.redisCalls, x.mariadbUs, x.dropped, x.claimed]),
    2,
  );
  const md = [
    `# bench:bloom`,
    '',
    `${args.items} items of one slice sized for ${args.items} at ${args.fp}: ${(c.bytes / 1024).toFixed(0)} KiB; measured false-positive rate ${(c.falsePositiveRate * 100).toFixed(3)} %`,
    '',
    costTable,
    '',
    `Redelivery storm: ${args.storm} fires, ${args.settledShare * 100} % settled, admitted ${CLAIM_BATCH} at a time`,
    '',
    stormTable,
  ].join('\n');
  const path = writeResults('bloom', { args, costs: c, storm: s }, md);
  process.stdout.write(`\n${md}\n\nwritten: ${path}.md\n`);
}

main().then(
  () => process.exit(0),
  (e) => {
    process.stderr.write(`${(e as Error).stack ?? String(e)}\n`);
    process.exit(1);
  },
);
