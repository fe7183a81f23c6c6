/**
 * Enable benchmark (a command, not a test): what creating fires costs a request, by the schedule's frequency.
 *
 *   npm run bench:enable -- [--enables 200] [--batches 10] [--batch-size 50] [--window-minutes 60]
 *
 * Starts the five built roles on a fresh database (needs `npm run build`; --api-only 1: the api alone,
 * so nothing else runs meanwhile) with a local receiver for the callbacks and authentication on (an
 * admin token, as `npm run up` runs it; --auth 0: off), then:
 * 1. enables --enables every-second timers and as many hourly ones, alternated one by one, and prints
 *    each kind's p50 and p90 latency and their ratio (every-second / hourly): an enable writes the near
 *    future (TIMER_PRECREATE_SECONDS), so both should cost about the same;
 * 2. sends --batches batch create+enable requests of --batch-size every-second timers, and then writes
 *    the same rows (timers, their two versions, their fires) with bare multi-row INSERTs into copies of
 *    those tables on the same server, one transaction per batch; prints rows/s of each and their ratio.
 *
 * Writes .local/results/enable-<time>.json and .md. A progress line every 50 requests.
 */
import { markdownTable, numericFlags, Receiver, Stack, writeResults } from '../../e2e/support';

const APP = 'bench-enable';
const opts = numericFlags(process.argv.slice(2), { enables: 200, batches: 10, batchSize: 50, windowMinutes: 60, minuteQuota: 120_000, precreateSeconds: 60, apiOnly: 0, auth: 1 });
const TOKEN = 'bench-enable-admin-token-0123456789';

interface Answer<T> {
  code: number;
  msg: string;
  id?: number;
  data?: T;
}

async function post<T>(stack: Stack, path: string, body: unknown): Promise<{ ms: number; answer: Answer<T> }> {
  const started = performance.now();
  const headers: Record<string, string> = { 'content-type': 'application/json', ...(opts.auth ? { authorization: `Bearer ${TOKEN}` } : {}) };
  const res = await fetch(`${stack.api.baseUrl}${path}`, { method: 'POST', headers, body: JSON.stringify(body) });
  const answer = (await res.json()) as Answer<T>;
  const ms = performance.now() - started;
  if (res.status !== 200 || answer.code !== 0) throw new Error(`${path}: ${res.status} ${answer.msg}`);
  return { ms, answer };
}

let hook = { url: 'http://127.0.0.1:9/bench', method: 'POST' };
const round = (n: number) => Math.round(n * 10) / 10;

async function enables(stack: Stack): Promise<Record<string, unknown>> {
  const kinds = { everySecond: '* * * * * *', hourly: '0 0 * * * *' } as const;
  const ms: Record<keyof typeof kinds, number[]> = { everySecond: [], hourly: [] };
  for (let i = 0; i < opts.enables; i++) {
    for (const kind of Object.keys(kinds) as (keyof typeof kinds)[]) {
      const { answer } = await post(stack, '/api/timer/v1/def', { app: APP, name: `${kind}-${i}`, cron: kinds[kind], notifyHTTPParam: hook });
      ms[kind].push((await post(stack, '/api/timer/v1/enable', { app: APP, id: answer.id })).ms);
    }
    if ((i + 1) % 50 === 0) console.log(`enables: ${i + 1} of each kind`);
  }
  const pct = (v: number[]) => {
    const s = [...v].sort((a, b) => a - b);
    return { p50: s[Math.floor(s.length * 0.5)], p90: s[Math.floor(s.length * 0.9)] };
  };
  const s = pct(ms.everySecond);
  const h = pct(ms.hourly);
  return { everySecond: s, hourly: h, ratioP50: s.p50 / h.p50, ratioP90: s.p90 / h.p90 };
}

async function batches(stack: Stack): Promise<Record<string, unknown>> {
  const ids: string[] = [];
  let rows = 0;
  let batchMs = 0;
  for (let b = 0; b < opts.batches; b++) {
    const timers = Array.from({ length: opts.batchSize }, (_, i) => ({ name: `batch-${b}-${i}`, cron: '* * * * * *', notifyHTTPParam: hook }));
    const { ms, answer } = await post<{ timers: { id: number; fires: number }[] }>(stack, '/api/timer/v1/def/batch', { app: APP, enable: true, timers });
    batchMs += ms;
    const created = answer.data!.timers;
    ids.push(...created.map((t) => String(t.id)));
    rows += created.length * 3 + created.reduce((n, t) => n + t.fires, 0); // a timer, its 2 versions, its fires
    console.log(`batch ${b + 1}/${opts.batches}: ${Math.round(ms)} ms`);
  }
  // The same rows again with bare multi-row INSERTs, into copies of the tables (no api, no checks, no index).
  const list = ids.map(() => '?').join(',');
  for (const t of ['timers', 'timer_versions', 'tasks']) {
    await stack.sql(`CREATE TABLE bare_${t} LIKE ${t}`);
  }
  const src = {
    timers: await stack.sql<Record<string, unknown>>(`SELECT * FROM timers WHERE id IN (${list})`, ids),
    timer_versions: await stack.sql<Record<string, unknown>>(`SELECT * FROM timer_versions WHERE timer_id IN (${list})`, ids),
    tasks: await stack.sql<Record<string, unknown>>(`SELECT app, timer_id, run_at FROM tasks WHERE timer_id IN (${list})`, ids),
  };
  const perBatch = (all: Record<string, unknown>[], key: string) => {
    const byBatch = new Map<number, Record<string, unknown>[]>();
    for (const r of all) {
      const b = Math.floor(ids.indexOf(String(r[key])) / opts.batchSize);
      byBatch.set(b, [...(byBatch.get(b) ?? []), r]);
    }
    return byBatch;
  };
  const parts = { timers: perBatch(src.timers, 'id'), timer_versions: perBatch(src.timer_versions, 'timer_id'), tasks: perBatch(src.tasks, 'timer_id') };
  const generated = new Set(
    (await stack.sql<{ c: string }>("SELECT CONCAT(TABLE_NAME, '.', COLUMN_NAME) AS c FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE() AND EXTRA LIKE '%GENERATED%'")).map((r) => r.c),
  );
  const value = (v: unknown) => (v !== null && typeof v === 'object' && !(v instanceof Date) && !Buffer.isBuffer(v) ? JSON.stringify(v) : v);
  let bareRows = 0;
  const started = performance.now();
  for (let b = 0; b < opts.batches; b++) {
    const statements: [string, unknown[]][] = [];
    for (const t of ['timers', 'timer_versions', 'tasks'] as const) {
      const batchRows = parts[t].get(b) ?? [];
      for (let i = 0; i < batchRows.length; i += 1_000) {
        const chunk = batchRows.slice(i, i + 1_000);
        const cols = Object.keys(chunk[0]).filter((c) => !generated.has(`${t}.${c}`));
        statements.push([`INSERT INTO bare_${t} (${cols.join(', ')}) VALUES ${chunk.map(() => `(${cols.map(() => '?').join(', ')})`).join(', ')}`, chunk.flatMap((r) => cols.map((c) => value(r[c])))]);
        bareRows += chunk.length;
      }
    }
    const c = await stack.db().getConnection();
    try {
      await c.beginTransaction();
      for (const [q, params] of statements) await c.query(q, params);
      await c.commit();
    } finally {
      c.release();
    }
  }
  const bareMs = performance.now() - started;
  const batchRowsPerSec = rows / (batchMs / 1000);
  const bareRowsPerSec = bareRows / (bareMs / 1000);
  return { batches: opts.batches, batchSize: opts.batchSize, rows, batchMs: Math.round(batchMs), batchRowsPerSec: Math.round(batchRowsPerSec), bareRows, bareMs: Math.round(bareMs), bareRowsPerSec: Math.round(bareRowsPerSec), ratio: batchRowsPerSec / bareRowsPerSec };
}

async function main(): Promise<void> {
  const receiver = await Receiver.start({ record: false });
  hook = { url: receiver.url('/bench'), method: 'POST' };
  const stack = await Stack.start({
    ...(opts.apiOnly ? { roles: ['api'] as const } : {}),
    ...(opts.auth ? { adminToken: TOKEN } : {}),
    env: { TIMER_WINDOW_MINUTES: String(opts.windowMinutes), TIMER_API_BATCH_MAX: String(Math.max(500, opts.batchSize)), TIMER_QUOTA_MAX_FIRES_PER_MINUTE: String(opts.minuteQuota), TIMER_PRECREATE_SECONDS: String(opts.precreateSeconds) },
  });
  try {
    await post(stack, '/api/app/v1/apps', { app: APP });
    const e = await enables(stack);
    const b = opts.batches > 0 ? await batches(stack) : {};
    const es = e.everySecond as { p50: number; p90: number };
    const eh = e.hourly as { p50: number; p90: number };
    const md = [
      `# Enable cost by frequency (${opts.enables} of each kind, ${opts.apiOnly ? 'the api alone' : 'the five roles'}, auth ${opts.auth ? 'on' : 'off'}, windows of ${opts.windowMinutes} min, TIMER_QUOTA_MAX_FIRES_PER_MINUTE=${opts.minuteQuota})`,
      '',
      markdownTable(
        ['', 'p50 ms', 'p90 ms'],
        [
          ['every-second', round(es.p50), round(es.p90)],
          ['hourly', round(eh.p50), round(eh.p90)],
          ['ratio', e.ratioP50 as number, e.ratioP90 as number],
        ],
        2,
      ),
      '',
      `# Batch create+enable against bare INSERTs (${opts.batches} x ${opts.batchSize} every-second timers)`,
      '',
      markdownTable(
        ['', 'rows', 'ms', 'rows/s'],
        [
          ['batch create+enable', b.rows as number, b.batchMs as number, b.batchRowsPerSec as number],
          ['bare multi-row INSERT', b.bareRows as number, b.bareMs as number, b.bareRowsPerSec as number],
          ['ratio', '', '', b.ratio as number],
        ],
        2,
      ),
    ].join('\n');
    console.log(md);
    console.log(`written: ${writeResults('enable', { opts, enables: e, batches: b }, md)}`);
  } finally {
    await stack.stop();
    await receiver.close();
  }
}

main().catch((e) => {
  console.error(e);
  process.exit(1);
});
