import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { PulsarAdminError } from './errors';
import { PulsarAdmin } from './pulsar-admin';

interface Seen {
  method: string;
  url: string;
  auth?: string;
  body: string;
}

type Route = (req: Seen) => { status: number; body?: string; headers?: Record<string, string> };

describe('PulsarAdmin (fake HTTP server)', () => {
  let server: http.Server;
  let seen: Seen[];
  let route: Route;
  let admin: PulsarAdmin;

  beforeEach(async () => {
    seen = [];
    route = () => ({ status: 404, body: '{"reason":"not here"}' });
    server = http.createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => {
        const r: Seen = { method: req.method ?? '', url: req.url ?? '', auth: req.headers.authorization, body };
        seen.push(r);
        const out = route(r);
        res.writeHead(out.status, { 'Content-Type': 'application/json', ...out.headers });
        res.end(out.body ?? '');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    admin = new PulsarAdmin({ serviceUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, token: 'adm' });
  });

  afterEach(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('creates a missing tenant on the clusters the broker reports, with the token', async () => {
    route = (r) => {
      if (r.url === '/admin/v2/clusters') return { status: 200, body: '["standalone"]' };
      if (r.method === 'GET') return { status: 404, body: '{"reason":"Tenant does not exist"}' };
      return { status: 204 };
    };
    await admin.ensureTenant('timer');
    expect(seen.map((r) => `${r.method} ${r.url}`)).toEqual([
      'GET /admin/v2/tenants/timer',
      'GET /admin/v2/clusters',
      'PUT /admin/v2/tenants/timer',
    ]);
    expect(JSON.parse(seen[2].body)).toEqual({ allowedClusters: ['standalone'], adminRoles: [] });
    expect(seen.every((r) => r.auth === 'Bearer adm')).toBe(true);
  });

  it('leaves an existing tenant alone and treats 409 as done for namespace, topic and subscription', async () => {
    route = (r) => (r.method === 'GET' ? { status: 200, body: '{}' } : { status: 409, body: '{"reason":"already exists"}' });
    await admin.ensureTenant('timer', ['c1']);
    await admin.ensureNamespace('timer/jobs');
    await admin.ensureTopic('persistent://timer/jobs/due');
    await admin.ensureSubscription('persistent://timer/jobs/due', 'worker', 'Earliest');
    expect(seen.map((r) => `${r.method} ${r.url}`)).toEqual([
      'GET /admin/v2/tenants/timer',
      'PUT /admin/v2/namespaces/timer/jobs',
      'PUT /admin/v2/persistent/timer/jobs/due',
      'PUT /admin/v2/persistent/timer/jobs/due/subscription/worker',
    ]);
    expect(JSON.parse(seen[3].body)).toEqual({ ledgerId: -1, entryId: -1 });
  });

  it('reports failures with method, path, status and the broker reason', async () => {
    route = () => ({ status: 500, body: '{"reason":"metadata store unavailable"}' });
    const error = await admin.ensureTopic('t/n/x').catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PulsarAdminError);
    expect(error).toMatchObject({ method: 'PUT', path: '/admin/v2/persistent/t/n/x', status: 500, body: 'metadata store unavailable' });
    expect((error as Error).message).toBe('Pulsar admin PUT /admin/v2/persistent/t/n/x failed: HTTP 500 metadata store unavailable');
    await expect(admin.ensureNamespace('bad')).rejects.toThrow(TypeError);
  });

  it('peeks entries with their properties (case kept) and key until the backlog ends', async () => {
    route = (r) => {
      const n = Number(/position\/(\d+)$/.exec(r.url)?.[1]);
      if (n > 2) return { status: 404, body: '{"reason":"Message not found"}' };
      return {
        status: 200,
        body: `payload-${n}`,
        headers: {
          'X-Pulsar-Message-ID': `9:${n}`,
          'X-Pulsar-PROPERTY-jobId': `j${n}`,
          'X-Pulsar-partition-key': Buffer.from(`key${n}`).toString('base64'),
          'X-Pulsar-partition-key-b64-encoded': 'true',
          'X-Pulsar-publish-time': '2026-01-01T00:00:00.000Z',
        },
      };
    };
    const peeked = await admin.peekMessages('t/n/x', 'sub', 5);
    expect(peeked.map((m) => ({ ...m, payload: m.payload.toString() }))).toEqual([
      { entryId: '9:1', payload: 'payload-1', key: 'key1', properties: { jobId: 'j1' }, publishTime: Date.UTC(2026, 0, 1) },
      { entryId: '9:2', payload: 'payload-2', key: 'key2', properties: { jobId: 'j2' }, publishTime: Date.UTC(2026, 0, 1) },
    ]);
    expect(seen.length).toBe(3);
  });

  it('reads the properties of a Pulsar 4.0 peek: one X-Pulsar-PROPERTY header holding a JSON object', async () => {
    route = (r) => {
      if (!r.url.endsWith('/position/1')) return { status: 404, body: '{"reason":"Message not found"}' };
      return {
        status: 200,
        body: 'p',
        headers: { 'X-Pulsar-Message-ID': '9:1', 'X-Pulsar-PROPERTY': '{"jobId":"J-1","Mixed-Case":"a b"}' },
      };
    };
    const [peeked] = await admin.peekMessages('t/n/x', 'sub', 5);
    expect(peeked.properties).toEqual({ jobId: 'J-1', 'Mixed-Case': 'a b' });
  });

  it('reads the position of the newest message a topic stores', async () => {
    route = () => ({ status: 200, body: '{"ledgerId":350,"entryId":2,"partitionIndex":-1,"batchSize":0,"batchIndex":-1}' });
    await expect(admin.lastMessageId('persistent://t/n/x')).resolves.toEqual({ ledgerId: 350, entryId: 2 });
    expect(seen.map((r) => `${r.method} ${r.url}`)).toEqual(['GET /admin/v2/persistent/t/n/x/lastMessageId']);
    route = () => ({ status: 200, body: '{}' });
    await expect(admin.lastMessageId('t/n/x')).rejects.toThrow(/no ledgerId\/entryId/);
  });

  it('health is true on ok and false (never throwing) when the broker does not answer', async () => {
    route = () => ({ status: 200, body: 'ok' });
    await expect(admin.health()).resolves.toMatchObject({ healthy: true, detail: 'ok' });
    const dead = new PulsarAdmin({ serviceUrl: 'http://127.0.0.1:1', requestTimeoutMs: 1000 });
    const health = await dead.health();
    expect(health.healthy).toBe(false);
    expect(health.detail).toMatch(/ECONNREFUSED/);
  });
});
