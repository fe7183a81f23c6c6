import { Body, Controller, Get, INestApplication, Param, Post, Req } from '@nestjs/common';
import type { Request } from 'express';
import { APP_FILTER } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { request as httpRequest } from 'http';
import { AddressInfo } from 'net';
import { brotliCompressSync, deflateSync, gzipSync } from 'zlib';
import { Registry } from 'prom-client';
import { TransactionDeadlockError } from '@timer/dal';
import { loadConfig, MetricsService } from '@timer/platform';
import { slowClient } from '@timer/testing';
import { ApiConfig, ApiEnv } from '../config/api.env';
import { ApiMetrics, statusClass } from '../metrics/api.metrics';
import { ApiExceptionFilter } from './api-exception.filter';
import { Transform } from 'class-transformer';
import { IsString } from 'class-validator';
import { badRequest } from './errors';
import { HttpSetupService } from './http-setup.service';
import { MAX_JSON_DEPTH } from './json-depth';
import { toTimerId } from './validators';

class IdDto {
  @Transform(toTimerId)
  @IsString()
  id!: string;
}

@Controller('api/ids')
class IdsController {
  @Post()
  take(@Body() body: IdDto): { code: 0; body: unknown } {
    return { code: 0, body };
  }
}

@Controller('api/echo')
class EchoController {
  @Post()
  echo(@Body() body: unknown): { code: 0; body: unknown } {
    return { code: 0, body };
  }
}

@Controller('api/ip')
class IpController {
  @Get()
  ip(@Req() req: Request): { code: 0; ip: string | undefined } {
    return { code: 0, ip: req.ip };
  }
}

@Controller('api/things')
class ThingsController {
  @Get(':id')
  get(@Param('id') id: string): { code: 0; id: string } {
    return { code: 0, id };
  }

  @Get(':id/fail')
  fail(): never {
    throw badRequest('id: not a thing');
  }

  @Get(':id/deadlock')
  deadlock(): never {
    throw new TransactionDeadlockError(3);
  }
}

interface Answer {
  status: number;
  body: { code: number; msg?: string; body?: unknown };
}

const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);

// The body parser and the request metrics as the api installs them, in front of real routes. Raw
// HTTP rather than supertest, which would re-encode a Buffer sent as JSON.
describe('HttpSetupService', () => {
  let app: INestApplication;
  let port: number;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      controllers: [EchoController, ThingsController, IdsController],
      providers: [
        { provide: ApiConfig, useValue: new ApiConfig(loadConfig(ApiEnv, {})) },
        { provide: APP_FILTER, useClass: ApiExceptionFilter },
        { provide: MetricsService, useValue: { registry: new Registry() } },
        ApiMetrics,
        HttpSetupService,
      ],
    }).compile();
    app = moduleRef.createNestApplication({ logger: false });
    await app.listen(0, '127.0.0.1');
    port = (app.getHttpServer().address() as AddressInfo).port;
  });
  afterAll(() => app.close());

  function post(body: Buffer | string, headers: Record<string, string> = {}, path = '/api/echo', method = 'POST'): Promise<Answer & { allow?: string }> {
    const payload = typeof body === 'string' ? Buffer.from(body) : body;
    return new Promise((resolve, reject) => {
      const req = httpRequest(
        { host: '127.0.0.1', port, method, path, headers: { 'content-type': 'application/json', 'content-length': String(payload.length), ...headers } },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(Buffer.concat(chunks).toString()) as Answer['body'], ...(res.headers.allow ? { allow: res.headers.allow } : {}) }));
        },
      );
      req.on('error', reject);
      req.end(payload);
    });
  }

  it('answers a transaction that kept deadlocking with 503 and Retry-After, no internals', async () => {
    const res = await new Promise<{ status: number; retryAfter?: string; body: Answer['body'] }>((resolve, reject) => {
      httpRequest({ host: '127.0.0.1', port, path: '/api/things/7/deadlock' }, (r) => {
        const chunks: Buffer[] = [];
        r.on('data', (c: Buffer) => chunks.push(c));
        r.on('end', () => resolve({ status: r.statusCode ?? 0, retryAfter: r.headers['retry-after'], body: JSON.parse(Buffer.concat(chunks).toString()) as Answer['body'] }));
      })
        .on('error', reject)
        .end();
    });
    expect(res).toEqual({
      status: 503,
      retryAfter: '1',
      body: expect.objectContaining({ code: 50300, msg: 'concurrent changes to the same timers or app kept deadlocking (nothing was written): retry' }),
    });
  });

  it('refuses an id field whose number is not written in digits, naming it, and reads one that is', async () => {
    expect(await post('{"id":1e3}', {}, '/api/ids')).toEqual({ status: 400, body: expect.objectContaining({ code: 40001, msg: 'id must be written in digits (a JSON integer or a digit string), not 1e3' }) });
    expect(await post('{"id":1000}', {}, '/api/ids')).toEqual({ status: 201, body: { code: 0, body: { id: 1000 } } });
    // Only the DTOs' id fields: another number keeps its JSON reading.
    expect((await post('{"n":1e3}')).status).toBe(201);
  });

  it('answers a method a known path does not take with 405 and Allow, an unknown path with 404', async () => {
    expect(await post('', { 'content-length': '0' }, '/api/echo', 'TRACE')).toEqual({ status: 405, allow: 'POST', body: expect.objectContaining({ code: 40500, msg: 'TRACE is not allowed on /api/echo: use POST' }) });
    expect(await post('', { 'content-length': '0' }, '/api/things/7', 'DELETE')).toMatchObject({ status: 404 });
    expect((await post('{}', { 'content-type': 'text/plain' }, '/api/ids', 'PUT')).status).toBe(405);
  });

  it('reads gzip, deflate and br bodies', async () => {
    const json = '{"a":[1,{"b":"c"}]}';
    for (const [encoding, packed] of [['gzip', gzipSync(json)], ['deflate', deflateSync(json)], ['br', brotliCompressSync(json)]] as const) {
      expect(await post(packed, { 'content-encoding': encoding })).toEqual({ status: 201, body: { code: 0, body: { a: [1, { b: 'c' }] } } });
    }
  });

  it.each([
    ['gzip', Buffer.from('not gzip at all')],
    ['gzip', gzipSync('{"a":1}').subarray(0, 12)], // truncated
    ['deflate', Buffer.from('not deflate')],
    ['br', Buffer.from('not brotli, not brotli, not brotli')],
  ])('answers a corrupt %s body with 400 naming the problem', async (encoding, body) => {
    const res = await post(body, { 'content-encoding': encoding });
    expect(res).toEqual({ status: 400, body: expect.objectContaining({ code: 40004, msg: `request body could not be decompressed (Content-Encoding "${encoding}")` }) });
  });

  it('answers a body not declared JSON with 415 naming application/json, before reading it', async () => {
    const form = await post('a=1', { 'content-type': 'application/x-www-form-urlencoded', 'content-encoding': 'gzip' });
    expect(form).toEqual({ status: 415, body: expect.objectContaining({ code: 41500, msg: 'Content-Type "application/x-www-form-urlencoded" is not accepted: send application/json' }) });
    expect((await post('{}', { 'content-type': 'text/plain' })).status).toBe(415);
    expect(await post('{}', { 'content-type': '' })).toEqual({ status: 415, body: expect.objectContaining({ msg: 'Content-Type is missing: send application/json' }) });
    expect((await post('{}', { 'content-type': 'application/merge-patch+json' })).status).toBe(201);
  });

  it('answers an unknown Content-Encoding with 415 naming it', async () => {
    const res = await post('{"a":1}', { 'content-encoding': 'zip9' });
    expect(res).toEqual({ status: 415, body: expect.objectContaining({ code: 41500, msg: 'unsupported Content-Encoding "zip9": use identity, gzip, deflate or br' }) });
  });

  it(`accepts JSON nested ${MAX_JSON_DEPTH} levels deep and refuses one level more`, async () => {
    expect((await post(nested(MAX_JSON_DEPTH))).status).toBe(201);
    const res = await post(`{"a":${nested(MAX_JSON_DEPTH)}}`);
    expect(res).toEqual({ status: 400, body: expect.objectContaining({ code: 40005, msg: `JSON body nested deeper than ${MAX_JSON_DEPTH} levels` }) });
  });

  it('refuses very deep JSON (plain, compressed or UTF-16) with 400, not a stack overflow', async () => {
    const deep = `{"a":${nested(60_000)}}`;
    expect((await post(deep)).body.code).toBe(40005);
    expect((await post(gzipSync(deep), { 'content-encoding': 'gzip' })).body.code).toBe(40005);
    const utf16 = await post(Buffer.from(deep, 'utf16le'), { 'content-type': 'application/json; charset=utf-16le' });
    expect(utf16).toEqual({ status: 400, body: expect.objectContaining({ code: 40005 }) });
  });

  it('answers a JSON charset it cannot decode with 415 naming it', async () => {
    const res = await post('{"a":1}', { 'content-type': 'application/json; charset=utf-7' });
    expect(res).toEqual({ status: 415, body: expect.objectContaining({ code: 41500, msg: 'unsupported charset "utf-7": use UTF-8' }) });
  });

  describe('request metrics (ApiMetrics)', () => {
    /** `route method status_class` -> observations, from the histogram's _count series. */
    async function counts(): Promise<Record<string, number>> {
      const out: Record<string, number> = {};
      for (const v of (await app.get(ApiMetrics).requestDuration.get()).values) {
        if (v.metricName === 'http_server_request_duration_seconds_count') out[`${v.labels.route} ${v.labels.method} ${v.labels.status_class}`] = v.value;
      }
      return out;
    }
    const status = async (path: string, init?: RequestInit) => (await fetch(`http://127.0.0.1:${port}${path}`, init)).status;

    it('labels by route template, method and status class; requests no route handled are "unmatched"', async () => {
      const before = await counts();
      const statuses = [
        await status('/api/things/42'),
        await status('/api/things/43'),
        await status('/api/things/42/fail'),
        (await post('{"a":1}')).status,
        await status('/api/nowhere/123'),
        // Refused by the body parser before routing (limit 256 KiB).
        (await post(JSON.stringify({ a: 'x'.repeat(300_000) }))).status,
        await status('/api/things/42', { method: 'PROPFIND' }),
      ];
      expect(statuses).toEqual([200, 200, 400, 201, 404, 413, 404]);
      const after = await counts();
      const added = Object.fromEntries(Object.entries(after).filter(([k, n]) => n !== (before[k] ?? 0)).map(([k, n]) => [k, n - (before[k] ?? 0)]));
      expect(added).toEqual({
        '/api/things/:id GET 2xx': 2,
        '/api/things/:id/fail GET 4xx': 1,
        '/api/echo POST 2xx': 1,
        'unmatched GET 4xx': 1,
        'unmatched POST 4xx': 1,
        'unmatched OTHER 4xx': 1,
      });
      const sum = (await app.get(ApiMetrics).requestDuration.get()).values.find(
        (v) => v.metricName === 'http_server_request_duration_seconds_sum' && v.labels.route === '/api/things/:id',
      );
      // Seconds: two local requests take milliseconds.
      expect(sum?.value).toBeGreaterThan(0);
      expect(sum?.value).toBeLessThan(2);
    });

    it('maps statuses to classes', () => {
      expect([200, 204, 301, 401, 429, 500, 503, 99, 600].map(statusClass)).toEqual(['2xx', '2xx', '3xx', '4xx', '4xx', '5xx', '5xx', 'other', 'other']);
    });
  });
});

describe('HttpSetupService: the client address and the server settings', () => {
  async function start(env: Record<string, string>): Promise<{ app: INestApplication; url: string }> {
    const moduleRef = await Test.createTestingModule({
      controllers: [IpController, ThingsController, EchoController],
      providers: [
        { provide: ApiConfig, useValue: ApiConfig.load(env) },
        { provide: APP_FILTER, useClass: ApiExceptionFilter },
        { provide: MetricsService, useValue: { registry: new Registry() } },
        ApiMetrics,
        HttpSetupService,
      ],
    }).compile();
    const app = moduleRef.createNestApplication({ logger: false });
    await app.listen(0, '127.0.0.1');
    return { app, url: `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}` };
  }
  const ipOf = async (url: string, xff?: string) =>
    ((await (await fetch(`${url}/api/ip`, { headers: xff ? { 'x-forwarded-for': xff } : {} })).json()) as { ip: string }).ip;

  it('ignores X-Forwarded-For by default: the TCP peer is the client', async () => {
    const { app, url } = await start({});
    try {
      expect(await ipOf(url, '198.51.100.1')).toBe('127.0.0.1');
      expect((await fetch(`${url}/api/ip`)).headers.get('x-powered-by')).toBeNull();
    } finally {
      await app.close();
    }
  });

  it('believes X-Forwarded-For through the hops TIMER_TRUSTED_PROXIES lists, and no further', async () => {
    const { app, url } = await start({ TIMER_TRUSTED_PROXIES: '127.0.0.0/8,10.0.0.0/8' });
    try {
      expect(await ipOf(url, '198.51.100.1')).toBe('198.51.100.1');
      expect(await ipOf(url, '198.51.100.1, 10.1.2.3')).toBe('198.51.100.1');
      // A client's own X-Forwarded-For in front of an untrusted hop is not believed.
      expect(await ipOf(url, '203.0.113.9, 198.51.100.2')).toBe('198.51.100.2');
      expect(await ipOf(url)).toBe('127.0.0.1');
    } finally {
      await app.close();
    }
  });

  it('answers 408 and closes an unfinished header block and a body sent at 1 byte/s, serving others meanwhile', async () => {
    const { app, url } = await start({ TIMER_HTTP_HEADERS_TIMEOUT_MS: '1000', TIMER_HTTP_REQUEST_TIMEOUT_MS: '2000' });
    try {
      const headers = slowClient(Number(new URL(url).port), 'GET /api/ip HTTP/1.1\r\nHost: x\r\nX-Slow: ');
      const body = slowClient(Number(new URL(url).port), 'POST /api/echo HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 40\r\n\r\n', '{"a":"' + 'x'.repeat(30));
      expect(await ipOf(url)).toBe('127.0.0.1');
      const [h, b] = await Promise.all([headers, body]);
      expect(h.answer).toMatch(/^HTTP\/1\.1 408 /);
      expect(h.closedAfterMs).toBeLessThan(3_500);
      expect(b.answer).toMatch(/^HTTP\/1\.1 408 /);
      expect(b.closedAfterMs).toBeGreaterThanOrEqual(1_900);
      expect(b.closedAfterMs).toBeLessThan(4_500);
    } finally {
      await app.close();
    }
  });
});
