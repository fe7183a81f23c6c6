import { createServer, IncomingMessage, Server } from 'http';
import { AddressInfo } from 'net';
import { freePort } from '@timer/testing';
import { fieldOf, TimerApiError, TimerNetworkError } from './errors';
import { parseRetryAfter } from './retry';
import { TimerClient } from './timer-client';

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}
type Reply = { status: number; body?: unknown; headers?: Record<string, string> };

/** An HTTP server on 127.0.0.1 answering the queued replies in order (the last one again once they run out). */
class Stub {
  readonly seen: Seen[] = [];
  private replies: Reply[] = [];
  private server!: Server;
  url = '';

  async start(): Promise<this> {
    this.server = createServer((req, res) => {
      let body = '';
      req.on('data', (d: Buffer) => (body += d.toString()));
      req.on('end', () => {
        this.seen.push({ method: req.method!, url: req.url!, headers: req.headers, body });
        const r = this.replies.length > 1 ? this.replies.shift()! : this.replies[0];
        res.writeHead(r.status, { 'content-type': 'application/json', ...r.headers });
        res.end(typeof r.body === 'string' ? r.body : JSON.stringify(r.body ?? { code: 0, msg: 'ok' }));
      });
    });
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  reply(...replies: Reply[]): void {
    this.replies = replies;
    this.seen.length = 0;
  }

  stop(): Promise<void> {
    return new Promise((resolve) => this.server.close(() => resolve()));
  }
}

const limited = (retryAfter?: string): Reply => ({
  status: 429,
  body: { code: 42900, msg: 'rate limit of app a exceeded', requestId: 'r1' },
  headers: retryAfter === undefined ? {} : { 'retry-after': retryAfter },
});
const TIMER = { app: 'a', name: 'n', cron: '* * * * *', notifyHTTPParam: { url: 'https://example.com/', method: 'POST' as const } };

describe('TimerClient against a stub server', () => {
  const stub = new Stub();
  const waits: number[] = [];
  let client: TimerClient;

  beforeAll(() => stub.start());
  afterAll(() => stub.stop());
  beforeEach(() => {
    waits.length = 0;
    client = new TimerClient({ baseUrl: `${stub.url}/`, token: 'tok', sleep: async (ms) => void waits.push(ms), retry: { maxRetries: 2, maxDelayMs: 5_000 } });
  });

  it('sends the token, the query of a GET and the JSON body of a DELETE', async () => {
    stub.reply({ status: 200, body: { code: 0, msg: 'ok', data: [{ fireId: '1-2' }], total: 7 } });
    expect(await client.listRecords({ app: 'a', timerID: 5, includePending: true, status: undefined })).toEqual({ data: [{ fireId: '1-2' }], total: 7 });
    expect(stub.seen[0]).toMatchObject({ method: 'GET', url: '/api/task/v1/records?app=a&timerID=5&includePending=true' });
    expect(stub.seen[0].headers.authorization).toBe('Bearer tok');
    stub.reply({ status: 200 });
    await client.deleteTimer({ id: '9', app: 'a' });
    expect(stub.seen[0]).toMatchObject({ method: 'DELETE', url: '/api/timer/v1/def', body: '{"id":"9","app":"a"}' });
    expect(stub.seen[0].headers['content-type']).toBe('application/json');
  });

  it('reads a 400 envelope into TimerApiError naming the field, and does not retry it', async () => {
    stub.reply({ status: 400, body: { code: 40001, msg: 'notifyHTTPParam.url must be an absolute http or https URL; name must be shorter', requestId: 'abc' } });
    const e = (await client.createTimer(TIMER, { idempotencyKey: 'k' }).catch((x: unknown) => x)) as TimerApiError;
    expect(e).toBeInstanceOf(TimerApiError);
    expect(e).toMatchObject({ status: 400, code: 40001, field: 'notifyHTTPParam.url', requestId: 'abc' });
    expect(e.message).toMatch(/^notifyHTTPParam\.url must be/);
    expect(stub.seen).toHaveLength(1);
  });

  it('gives the current version of a stale edit', async () => {
    stub.reply({ status: 409, body: { code: 40901, msg: 'version 2 is not the current version 3', requestId: 'x', data: { version: 3 } } });
    const e = (await client.patchTimer({ id: 1, app: 'a', version: 2, name: 'm' }).catch((x: unknown) => x)) as TimerApiError;
    expect(e).toMatchObject({ status: 409, code: 40901, currentVersion: 3, field: undefined });
  });

  it('turns an answer that is not an envelope into an error with the status as code', async () => {
    stub.reply({ status: 502, body: '<html>bad gateway</html>', headers: { 'content-type': 'text/html' } });
    const e = (await client.getTimer({ id: 1, app: 'a' }).catch((x: unknown) => x)) as TimerApiError;
    expect(e).toMatchObject({ status: 502, code: 50200 });
    expect(e.message).toContain('HTTP 502');
  });

  it('retries 429 and 503 after Retry-After (seconds or an HTTP date), then answers', async () => {
    const date = new Date(Date.now() + 3_000).toUTCString();
    stub.reply(limited('2'), { status: 503, body: { code: 50300, msg: 'try again' }, headers: { 'retry-after': date } }, { status: 200, body: { code: 0, msg: 'ok', data: { fireId: '1-5', runAt: 5 } } });
    expect(await client.runTimer({ id: 1, app: 'a' })).toEqual({ fireId: '1-5', runAt: 5 });
    expect(stub.seen).toHaveLength(3);
    expect(waits[0]).toBe(2_000);
    expect(waits[1]).toBeGreaterThan(1_000);
    expect(waits[1]).toBeLessThanOrEqual(3_000);
  });

  it('waits a second when a 503 has no Retry-After, and gives up after maxRetries', async () => {
    stub.reply({ status: 503, body: { code: 50300, msg: 'redis down' } });
    const e = (await client.enableTimer({ id: 1, app: 'a' }).catch((x: unknown) => x)) as TimerApiError;
    expect(e).toMatchObject({ status: 503, code: 50300 });
    expect(stub.seen).toHaveLength(3);
    expect(waits).toEqual([1_000, 1_000]);
  });

  it('does not retry a 429 without Retry-After (a quota refusal: waiting does not lift it)', async () => {
    stub.reply({ status: 429, body: { code: 42902, msg: 'quota maxFiresPerMinute of app a is 10' } });
    await expect(client.patchTimer({ id: 1, app: 'a', version: 1, cron: '* * * * * *' })).rejects.toMatchObject({ status: 429, code: 42902 });
    expect(stub.seen).toHaveLength(1);
  });

  it('does not wait for a Retry-After beyond the cap: the error carries it', async () => {
    stub.reply(limited('60'));
    const e = (await client.listTimers({ app: 'a' }).catch((x: unknown) => x)) as TimerApiError;
    expect(e).toMatchObject({ status: 429, extra: { retryAfterMs: 60_000 } });
    expect(stub.seen).toHaveLength(1);
    expect(waits).toEqual([]);
  });

  it('retries a create only when it carries an Idempotency-Key, and reports a replay', async () => {
    stub.reply(limited('1'));
    await expect(client.createTimer(TIMER)).rejects.toMatchObject({ status: 429 });
    expect(stub.seen).toHaveLength(1);
    expect(stub.seen[0].headers['idempotency-key']).toBeUndefined();

    stub.reply(limited('1'), { status: 200, body: { code: 0, msg: 'ok', id: 4, version: 1 }, headers: { 'idempotent-replayed': 'true' } });
    expect(await client.createTimer(TIMER, { idempotencyKey: 'key-1' })).toEqual({ id: 4, version: 1, replayed: true });
    expect(stub.seen.map((s) => s.headers['idempotency-key'])).toEqual(['key-1', 'key-1']);
  });

  it('creates a batch in one request, retrying it only with an Idempotency-Key, and reports a replay', async () => {
    const batch = { app: 'a', enable: true, timers: [{ name: 'n1', cron: '0 0 * * * *', notifyHTTPParam: { url: 'https://example.com/h', method: 'POST' as const } }] };
    const answer = { code: 0, msg: 'ok', data: { timers: [{ id: 7, version: 2, enabled: true, fires: 3 }] } };
    stub.reply({ status: 200, body: answer });
    expect(await client.createTimers(batch)).toEqual({ timers: [{ id: 7, version: 2, enabled: true, fires: 3 }], replayed: false });
    expect(stub.seen[0]).toMatchObject({ method: 'POST', url: '/api/timer/v1/def/batch', body: JSON.stringify(batch) });

    stub.reply(limited('1'), { status: 200, body: answer, headers: { 'idempotent-replayed': 'true' } });
    expect(await client.createTimers(batch, { idempotencyKey: 'b-1' })).toMatchObject({ replayed: true });
    expect(stub.seen.map((s) => s.headers['idempotency-key'])).toEqual(['b-1', 'b-1']);
  });

  it('answers the readiness probe\'s 503 as a report, without retrying', async () => {
    stub.reply({ status: 503, body: { status: 'error', error: { redis: { status: 'down' } } } });
    expect(await client.getReadiness()).toMatchObject({ ok: false, status: 'error', error: { redis: { status: 'down' } } });
    expect(stub.seen).toHaveLength(1);
  });

  it('throws TimerNetworkError when nothing listens', async () => {
    const port = await freePort();
    const closed = new TimerClient({ baseUrl: `http://127.0.0.1:${port}` });
    const e = (await closed.getLiveness().catch((x: unknown) => x)) as TimerNetworkError;
    expect(e).toBeInstanceOf(TimerNetworkError);
    expect(e.message).toMatch(new RegExp(`^GET http://127.0.0.1:${port}/health/live: fetch failed \\(.*ECONNREFUSED`));
  });
});

describe('parseRetryAfter', () => {
  const now = Date.parse('2026-01-01T00:00:00Z');
  it.each([
    ['3', 3_000],
    [' 0 ', 0],
    ['Thu, 01 Jan 2026 00:00:05 GMT', 5_000],
    ['Wed, 31 Dec 2025 23:00:00 GMT', 0],
    ['soon', undefined],
    ['-1', undefined],
    ['1.5', undefined],
    [null, undefined],
  ])('%s -> %s', (value, ms) => expect(parseRetryAfter(value, now)).toBe(ms));
});

describe('fieldOf', () => {
  it.each([
    ['notifyHTTPParam.url must be an absolute http or https URL', 'notifyHTTPParam.url'],
    ['runAt "2026-02-30T00:00:00Z" is not a real date-time: day 30', 'runAt'],
    ['maxFires: the 3 fires counted from startAt ...', 'maxFires'],
    ['property colour should not exist', 'colour'],
    ['Idempotency-Key header must be given once', 'Idempotency-Key'],
    ['version must be an integer: the current version of the timer (from create or GET)', 'version'],
    ['malformed JSON body', undefined],
    ['timer has no fire left', undefined],
    ['from..to spans more than 31 days', undefined],
  ])('%s -> %s', (msg, field) => expect(fieldOf(msg)).toBe(field));

  it('is set for 400 answers only', () => {
    expect(new TimerApiError(404, 40400, 'timer not found').field).toBeUndefined();
    expect(new TimerApiError(400, 40001, 'cron never fires').field).toBe('cron');
  });
});
