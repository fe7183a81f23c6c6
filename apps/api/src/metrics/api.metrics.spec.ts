import { Body, Controller, Get, INestApplication, Param, Post } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { Test } from '@nestjs/testing';
import { AddressInfo } from 'net';
import { Registry } from 'prom-client';
import { loadConfig, MetricsService } from '@timer/platform';
import { ApiExceptionFilter } from '../common/api-exception.filter';
import { badRequest } from '../common/errors';
import { HttpSetupService } from '../common/http-setup.service';
import { ApiConfig, ApiEnv } from '../config/api.env';
import { ApiMetrics, statusClass } from './api.metrics';

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

  @Post()
  create(@Body() body: unknown): { code: 0; body: unknown } {
    return { code: 0, body };
  }
}

// The request histogram as the api installs it (HttpSetupService), in front of real routes, over HTTP.
describe('ApiMetrics request histogram', () => {
  let app: INestApplication;
  let base: string;
  let metrics: ApiMetrics;

  beforeAll(async () => {
    const moduleRef = await Test.createTestingModule({
      controllers: [ThingsController],
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
    base = `http://127.0.0.1:${(app.getHttpServer().address() as AddressInfo).port}`;
    metrics = app.get(ApiMetrics);
  });
  afterAll(() => app.close());

  /** `route method status_class` -> observations, from the histogram's _count series. */
  async function counts(): Promise<Record<string, number>> {
    const out: Record<string, number> = {};
    for (const v of (await metrics.requestDuration.get()).values) {
      if (v.metricName !== 'http_server_request_duration_seconds_count') continue;
      out[`${v.labels.route} ${v.labels.method} ${v.labels.status_class}`] = v.value;
    }
    return out;
  }

  it('labels by route template, method and status class; requests no route handled are "unmatched"', async () => {
    const statuses = [
      (await fetch(`${base}/api/things/42`)).status,
      (await fetch(`${base}/api/things/43`)).status,
      (await fetch(`${base}/api/things/42/fail`)).status,
      (await fetch(`${base}/api/things`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"a":1}' })).status,
      (await fetch(`${base}/api/nowhere/123`)).status,
      // Refused by the body parser before routing (limit 256 KiB).
      (await fetch(`${base}/api/things`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ a: 'x'.repeat(300_000) }) })).status,
      (await fetch(`${base}/api/things/42`, { method: 'PROPFIND' })).status,
    ];
    expect(statuses).toEqual([200, 200, 400, 201, 404, 413, 404]);
    expect(await counts()).toEqual({
      '/api/things/:id GET 2xx': 2,
      '/api/things/:id/fail GET 4xx': 1,
      '/api/things POST 2xx': 1,
      'unmatched GET 4xx': 1,
      'unmatched POST 4xx': 1,
      'unmatched OTHER 4xx': 1,
    });
  });

  it('reports durations in seconds', async () => {
    const sum = (await metrics.requestDuration.get()).values.find((v) => v.metricName === 'http_server_request_duration_seconds_sum' && v.labels.route === '/api/things/:id');
    expect(sum?.value).toBeGreaterThan(0);
    // Two local requests take milliseconds, not seconds.
    expect(sum?.value).toBeLessThan(2);
  });

  it('maps statuses to classes', () => {
    expect([200, 204, 301, 401, 429, 500, 503, 99, 600].map(statusClass)).toEqual(['2xx', '2xx', '3xx', '4xx', '4xx', '5xx', '5xx', 'other', 'other']);
  });
});
