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
