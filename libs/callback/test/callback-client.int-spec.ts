import { createServer, IncomingMessage, Server, ServerResponse } from 'http';
import { AddressInfo } from 'net';
import { Webhook } from 'standardwebhooks';
import { CallbackClient, verifySignature } from '../src';

interface Seen { method: string; url: string; headers: IncomingMessage['headers']; rawHeaders: string[]; body: string }

describe('CallbackClient against a real HTTP receiver on loopback', () => {
  let server: Server;
  let base: string;
  const seen: Seen[] = [];
  let respond: (req: IncomingMessage, res: ServerResponse) => void = (_q, s) => s.end('ok');

  beforeAll(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        seen.push({ method: req.method!, url: req.url!, headers: req.headers, rawHeaders: req.rawHeaders, body });
        respond(req, res);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  beforeEach(() => {
    seen.length = 0;
    respond = (_q, s) => s.end('ok');
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((r) => server.close(r));
  });

  const fire = { timerId: '42', runAt: 1_763_800_000_000, attempt: 2 };

  it('sends the body verbatim with the contract headers and a verifiable signature', async () => {
    const client = new CallbackClient({ allowPrivate: true });
    const body = '{"a":1,"s":"x\\"y"}';
    const result = await client.deliver({ url: `${base}/hook?q=1`, method: 'POST', header: { 'Content-Type': ['application/json'], 'X-Multi': ['a', 'b'] }, body }, fire, 'shh');
    await client.close();
    expect(result).toMatchObject({ ok: true, status: 200, output: 'ok', retryable: false });
    const [req] = seen;
    expect(req).toMatchObject({ method: 'POST', url: '/hook?q=1', body });
    expect(req.headers).toMatchObject({
      'content-type': 'application/json',
      'x-multi': 'a, b',
      'x-timer-id': '42',
      'x-timer-fire-id': '42-1763800000000',
      'x-timer-scheduled-at': '1763800000000',
      'x-timer-attempt': '2',
    });
    expect(verifySignature('shh', req.headers['x-timer-signature'] as string, body, 60_000)).toBe(true);
    expect(req.headers['x-timer-redelivery']).toBeUndefined();
  });

  it('signs Standard Webhooks headers that the standardwebhooks library verifies, with every secret given', async () => {
    const client = new CallbackClient({ allowPrivate: true });
    const current = `whsec_${Buffer.alloc(32, 1).toString('base64')}`;
    const previous = `whsec_${Buffer.alloc(32, 2).toString('base64')}`;
    const body = '{"n":1}';
    await client.deliver({ url: base, method: 'POST', body, header: { 'Webhook-Signature': ['v1,forged'], 'WEBHOOK-ID': ['x'] } }, fire, [current, previous]);
    await client.close();
    const { headers, rawHeaders } = seen[seen.length - 1];
    expect(headers['webhook-id']).toBe('42-1763800000000');
    expect(Number(headers['webhook-timestamp'])).toBeCloseTo(Date.now() / 1000, -1);
    expect((headers['webhook-signature'] as string).split(' ')).toHaveLength(2);
    // The timer's own webhook-* headers are dropped, not sent beside ours.
    expect(rawHeaders.filter((_v, i) => i % 2 === 0 && /^webhook-/i.test(rawHeaders[i]))).toHaveLength(3);
    const h = headers as Record<string, string>;
    for (const secret of [current, previous]) expect(new Webhook(secret).verify(body, h)).toEqual({ n: 1 });
    expect(() => new Webhook(`whsec_${Buffer.alloc(32, 3).toString('base64')}`).verify(body, h)).toThrow();
    // X-Timer-Signature (deprecated) carries the current secret only.
    expect(verifySignature(current, h['x-timer-signature'], body, 60_000)).toBe(true);
    expect(verifySignature(previous, h['x-timer-signature'], body, 60_000)).toBe(false);
  });

  it('keys a secret without the whsec_ prefix (issued before Standard Webhooks) by its UTF-8 bytes', async () => {
    const client = new CallbackClient({ allowPrivate: true });
    await client.deliver({ url: base, method: 'POST', body: '{}' }, fire, 'legacy-secret');
    await client.close();
    const h = seen[seen.length - 1].headers as Record<string, string>;
    expect(new Webhook(`whsec_${Buffer.from('legacy-secret').toString('base64')}`).verify('{}', h)).toEqual({});
  });

  it('flags a redelivery (an earlier delivery of the attempt may have reached the receiver)', async () => {
    const client = new CallbackClient({ allowPrivate: true });
    await client.deliver({ url: `${base}/again`, method: 'POST', body: '{}' }, { ...fire, redelivery: true });
    await client.close();
    expect(seen[seen.length - 1].headers).toMatchObject({ 'x-timer-redelivery': '1', 'x-timer-fire-id': '42-1763800000000', 'x-timer-attempt': '2' });
  });

  it('sends our User-Agent, unless the timer gives one (any case): then only the timer\'s', async () => {
    const client = new CallbackClient({ allowPrivate: true, userAgent: 'timer-service/test' });
    const userAgents = () => {
      const raw = seen[seen.length - 1].rawHeaders;
      return raw.filter((_v, i) => i % 2 === 1 && raw[i - 1].toLowerCase() === 'user-agent');
    };
    await client.deliver({ url: base, method: 'GET' }, fire);
    expect(userAgents()).toEqual(['timer-service/test']);
    await client.deliver({ url: base, method: 'GET', header: { 'User-Agent': ['billing-bot/2.1'] } }, fire);
    expect(userAgents()).toEqual(['billing-bot/2.1']);
    await client.deliver({ url: base, method: 'POST', header: { 'user-agent': ['lower/1'], 'X-Other': ['x'] }, body: '{}' }, fire);
    expect(userAgents()).toEqual(['lower/1']);
    expect(seen[seen.length - 1].headers).toMatchObject({ 'x-other': 'x', 'x-timer-id': '42' });
    await client.deliver({ url: base, method: 'GET', header: { 'USER-AGENT': ['upper/1'] } }, fire);
    expect(userAgents()).toEqual(['upper/1']);
    await client.close();
  });

  it('treats non-2xx as failure: 5xx/429 retryable, 4xx not', async () => {
    const client = new CallbackClient({ allowPrivate: true });
    respond = (_q, s) => { s.statusCode = 500; s.end('boom'); };
    expect(await client.deliver({ url: base, method: 'GET' }, fire)).toMatchObject({ ok: false, status: 500, output: 'boom', error: 'HTTP 500', retryable: true });
    respond = (_q, s) => { s.statusCode = 404; s.end(); };
    expect(await client.deliver({ url: base, method: 'DELETE' }, fire)).toMatchObject({ ok: false, status: 404, retryable: false });
    await client.close();
  });

  it("reads a 429's or 503's Retry-After (the first of several), and no other status's", async () => {
    const client = new CallbackClient({ allowPrivate: true });
    respond = (_q, s) => { s.writeHead(429, [['Retry-After', '7'], ['retry-after', '9']]); s.end(); };
    expect(await client.deliver({ url: base, method: 'GET' }, fire)).toMatchObject({ ok: false, status: 429, retryable: true, retryAfterMs: 7_000 });
    respond = (_q, s) => { s.writeHead(503, { 'retry-after': '2' }); s.end(); };
    expect(await client.deliver({ url: base, method: 'GET' }, fire)).toMatchObject({ status: 503, retryAfterMs: 2_000 });
    respond = (_q, s) => { s.writeHead(500, { 'retry-after': '2' }); s.end(); };
    expect(await client.deliver({ url: base, method: 'GET' }, fire)).not.toHaveProperty('retryAfterMs');
    await client.close();
  });

  it('stops reading a response over 1 MiB and answers with its start, the path and query sent as given', async () => {
    const client = new CallbackClient({ allowPrivate: true, maxOutputBytes: 4 });
    let ticker: NodeJS.Timeout | undefined;
    respond = (_q, s) => {
      s.writeHead(200);
      const chunk = 'x'.repeat(65_536);
      ticker = setInterval(() => s.write(chunk), 1); // endless: only the cut ends the call
    };
    const result = await client.deliver({ url: `${base}/a/b?c=1#frag`, method: 'GET' }, fire);
    clearInterval(ticker);
    await client.close();
    expect(result).toMatchObject({ ok: true, status: 200, output: 'xxxx' });
    expect(seen[0].url).toBe('/a/b?c=1');
  });

  it('cuts a long response at maxOutputBytes on a character boundary', async () => {
    const client = new CallbackClient({ allowPrivate: true, maxOutputBytes: 10 });
    respond = (_q, s) => s.end('ééééééééééééééé'); // 2 bytes each
    const result = await client.deliver({ url: base, method: 'GET' }, fire);
    await client.close();
    expect(result.ok).toBe(true);
    expect(result.output).toBe('ééééé');
  });

  it('gives up after the timeout and says so', async () => {
    const client = new CallbackClient({ allowPrivate: true, timeoutMs: 300 });
    respond = () => undefined; // never answers
    const result = await client.deliver({ url: base, method: 'GET' }, fire);
    await client.close();
    expect(result).toMatchObject({ ok: false, error: 'no answer within 300 ms', retryable: true });
    expect(result.costMs).toBeGreaterThanOrEqual(250);
    expect(result.costMs).toBeLessThan(2_000);
  });

  it('holds the whole call to the timeout, however the receiver trickles its body', async () => {
    const client = new CallbackClient({ allowPrivate: true, timeoutMs: 400 });
    let ticker: NodeJS.Timeout | undefined;
    respond = (_q, s) => {
      s.writeHead(200);
      ticker = setInterval(() => s.write('.'), 50); // each chunk well inside the per-chunk timeout
    };
    const result = await client.deliver({ url: base, method: 'GET' }, fire);
    clearInterval(ticker);
    await client.close();
    expect(result).toMatchObject({ ok: false, error: 'no answer within 400 ms', retryable: true });
    expect(result.costMs).toBeGreaterThanOrEqual(350);
    expect(result.costMs).toBeLessThan(2_000);
  });

  it('refuses loopback by IP and by name unless private callbacks are allowed', async () => {
    const client = new CallbackClient();
    const byIp = await client.deliver({ url: base, method: 'GET' }, fire);
    const byName = await client.deliver({ url: base.replace('127.0.0.1', 'localhost'), method: 'GET' }, fire);
    await client.close();
    expect(byIp).toMatchObject({ ok: false, retryable: false });
    expect(byIp.error).toMatch(/127\.0\.0\.1 is a loopback or private address/);
    expect(byName).toMatchObject({ ok: false, retryable: false });
    expect(byName.error).toMatch(/refused: .* is a loopback or private address/);
    expect(seen).toHaveLength(0);
  });

  it('reports a connection refused as retryable', async () => {
    const client = new CallbackClient({ allowPrivate: true });
    const result = await client.deliver({ url: 'http://127.0.0.1:1/x', method: 'GET' }, fire);
    await client.close();
    expect(result).toMatchObject({ ok: false, retryable: true });
    expect(result.error).toMatch(/ECONNREFUSED/);
  });
});
