import { createServer, Server } from 'http';
import { AddressInfo } from 'net';
import { CallbackClient } from './callback-client';

describe('CallbackClient timeouts', () => {
  let server: Server;
  let url: string;
  const client = new CallbackClient({ timeoutMs: 5_000, allowPrivate: true });

  beforeAll(async () => {
    // Answers after the delay the path names (ms).
    server = createServer((req, res) => {
      const t = setTimeout(() => res.end('late'), Number(req.url?.slice(1)));
      res.on('close', () => clearTimeout(t));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await client.close();
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  const fire = { timerId: '1', runAt: 1, attempt: 1 };

  it("cuts a call at the request's own timeout, shorter than the client's", async () => {
    const r = await client.deliver({ url: `${url}/3000`, method: 'POST', timeoutMs: 300 }, fire);
    expect(r).toMatchObject({ ok: false, retryable: true, error: 'no answer within 300 ms' });
    expect(r.costMs).toBeGreaterThanOrEqual(290);
    expect(r.costMs).toBeLessThan(1_500);
  });

  it("waits for the request's own timeout when it is longer than the client's", async () => {
    const short = new CallbackClient({ timeoutMs: 200, allowPrivate: true });
    try {
      expect(await short.deliver({ url: `${url}/400`, method: 'GET', timeoutMs: 2_000 }, fire)).toMatchObject({ ok: true, status: 200, output: 'late' });
      expect(await short.deliver({ url: `${url}/400`, method: 'GET' }, fire)).toMatchObject({ ok: false, error: 'no answer within 200 ms' });
    } finally {
      await short.close();
    }
  });
});

describe('CallbackClient trace context', () => {
  it('sends the fire\'s traceparent, replacing a timer header of that name', async () => {
    let seen: string | string[] | undefined;
    const server = createServer((req, res) => {
      seen = req.headers.traceparent;
      res.end('ok');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const client = new CallbackClient({ timeoutMs: 2_000, allowPrivate: true });
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
      const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
      await client.deliver({ url, method: 'POST', header: { TraceParent: ['00-ffffffffffffffffffffffffffffffff-ffffffffffffffff-01'] } }, { timerId: '1', runAt: 1, attempt: 1, traceparent });
      expect(seen).toBe(traceparent);
      await client.deliver({ url, method: 'POST' }, { timerId: '1', runAt: 1, attempt: 1 });
      expect(seen).toBeUndefined();
    } finally {
      await client.close();
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    }
  });
});

describe('CallbackClient answers kept for the record', () => {
  let server: Server;
  let url: string;
  const fire = { timerId: '1', runAt: 1, attempt: 1 };

  beforeAll(async () => {
    // /text: 10 bytes of text; /binary: bytes that are not UTF-8; /big: 1 MiB; /euro: "€€" (3 bytes each).
    server = createServer((req, res) => {
      res.setHeader('Content-Type', 'text/plain');
      res.setHeader('X-Request-Id', ['a', 'b']);
      res.setHeader('X-Other', 'not kept');
      if (req.url === '/binary') res.end(Buffer.from([0xff, 0xfe, 0x41, 0x00, 0xc3]));
      else if (req.url === '/continuations') res.end(Buffer.alloc(100, 0x80));
      else if (req.url === '/big') res.end(Buffer.alloc(1_048_576, 0x61));
      else if (req.url === '/euro') res.end('€€');
      else res.writeHead(202).end('0123456789');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  async function answer(path: string, options: { recordHeaders?: string[]; recordBodyBytes?: number }) {
    const client = new CallbackClient({ allowPrivate: true, ...options });
    try {
      return await client.deliver({ url: `${url}${path}`, method: 'GET' }, fire);
    } finally {
      await client.close();
    }
  }

  it('keeps the status, the configured headers (any case, repeated ones joined) and the whole short body', async () => {
    const r = await answer('/text', { recordHeaders: ['content-TYPE', 'x-request-id'], recordBodyBytes: 4_096 });
    expect(r.response).toEqual({ status: 202, headers: { 'content-type': 'text/plain', 'x-request-id': 'a, b' }, body: '0123456789', truncated: false });
  });

  it('cuts the body at the configured bytes and says so', async () => {
    expect((await answer('/text', { recordBodyBytes: 4 })).response).toEqual({ status: 202, headers: {}, body: '0123', truncated: true });
    const big = (await answer('/big', { recordBodyBytes: 16 })).response!;
    expect(big).toEqual({ status: 200, headers: {}, body: 'a'.repeat(16), truncated: true });
  });

  it('cuts on a character boundary and stores bytes that are not UTF-8 as replacement characters', async () => {
    expect((await answer('/euro', { recordBodyBytes: 4 })).response).toMatchObject({ body: '€', truncated: true });
    expect((await answer('/binary', { recordBodyBytes: 64 })).response).toMatchObject({ body: '\uFFFD\uFFFDA\u0000\uFFFD', truncated: false });
    // Bytes that cannot be a character's tail: cut where asked, not backed up to nothing.
    expect((await answer('/continuations', { recordBodyBytes: 16 })).response).toMatchObject({ body: '\uFFFD'.repeat(16), truncated: true });
  });

  it('keeps headers only when the body is off, and nothing when both are off', async () => {
    expect((await answer('/text', { recordHeaders: ['content-type'], recordBodyBytes: 0 })).response).toEqual({ status: 202, headers: { 'content-type': 'text/plain' }, body: '', truncated: true });
    const off = await answer('/text', {});
    expect(off).toMatchObject({ ok: true, status: 202, output: '0123456789' });
    expect(off.response).toBeUndefined();
  });
});
