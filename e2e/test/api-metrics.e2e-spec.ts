import { metricBy, MetricSample, scrapeMetrics, Stack } from '../support';

// The api's RED metrics as Prometheus scrapes them from the built api process: after a 2xx, a 400,
// a 404, per-app 429s, 401s without and with a bad token and a failed-authentication 429, /metrics
// has http_server_request_duration_seconds by route template (never the raw URL), method and status
// class, and the 429 and 401 counters by limit and reason. Only the api role runs. Needs
// `npm run build` first.
jest.setTimeout(60_000);

const ADMIN = 'e2e-metrics-admin-token-0123456789';
const APP = 'e2e-metrics';
const DURATION = 'http_server_request_duration_seconds';

let stack: Stack;
let samples: MetricSample[];
const statuses: Record<string, number[]> = {};

async function call(what: string, path: string, token?: string): Promise<void> {
  const res = await fetch(`${stack.api.baseUrl}${path}`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  await res.arrayBuffer();
  (statuses[what] ??= []).push(res.status);
}

/** The request count of one (route, method, status class). */
function requests(route: string, method: string, statusClass: string): number {
  return samples
    .filter((s) => s.name === `${DURATION}_count` && s.labels.route === route && s.labels.method === method && s.labels.status_class === statusClass)
    .reduce((n, s) => n + s.value, 0);
}

beforeAll(async () => {
  stack = await Stack.start({
    roles: ['api'],
    adminToken: ADMIN,
    // Small limits, so a few requests reach them.
    env: { TIMER_RATE_LIMIT_PER_SEC: '3', TIMER_AUTH_FAILURES_PER_MIN: '2' },
  });
  await call('list', `/api/timer/v1/defs?app=${APP}`, ADMIN);
  await call('bad id', `/api/timer/v1/def?app=${APP}&id=not-a-number`, ADMIN);
  await call('unknown path', '/api/timer/v1/nope/12345', ADMIN);
  // 8 at once: however they fall into the one-second windows, one window gets more than 3.
  await Promise.all(Array.from({ length: 8 }, () => call('burst', `/api/timer/v1/defs?app=${APP}`, ADMIN)));
  // Last, since they make this address wait for the minute: two failures, then the limit answers.
  await call('no token', `/api/timer/v1/defs?app=${APP}`);
  await call('bad token', `/api/timer/v1/defs?app=${APP}`, 'not-a-valid-token');
  await call('limited', `/api/timer/v1/defs?app=${APP}`, 'not-a-valid-token');
  samples = (await scrapeMetrics(stack.port('api')))!;
});

afterAll(async () => {
  await stack?.stop();
});

describe('api RED metrics on /metrics', () => {
  it('got the answers the scenario needs', () => {
    expect(statuses['list']).toEqual([200]);
    expect(statuses['bad id']).toEqual([400]);
    expect(statuses['unknown path']).toEqual([404]);
    expect(statuses['burst'].filter((s) => s === 429).length).toBeGreaterThanOrEqual(1);
    expect(statuses['burst'].every((s) => s === 200 || s === 429)).toBe(true);
    expect([statuses['no token'], statuses['bad token'], statuses['limited']]).toEqual([[401], [401], [429]]);
  });

  it('has the request histogram by route template, method and status class', () => {
    const burstOk = statuses['burst'].filter((s) => s === 200).length;
    const burst429 = statuses['burst'].length - burstOk;
    expect(requests('/api/timer/v1/defs', 'GET', '2xx')).toBe(1 + burstOk);
    expect(requests('/api/timer/v1/defs', 'GET', '4xx')).toBe(burst429 + 3);
    expect(requests('/api/timer/v1/def', 'GET', '4xx')).toBe(1);
    expect(requests('unmatched', 'GET', '4xx')).toBe(1);
    // Bounded labels: route templates or "unmatched", never a raw URL with its query or ids.
    const routes = new Set(samples.filter((s) => s.name === `${DURATION}_count`).map((s) => s.labels.route));
    for (const r of routes) expect(r).toMatch(/^(unmatched|\/[a-z0-9/:_-]*)$/);
    expect([...routes].filter((r) => r.includes('12345') || r.includes('?'))).toEqual([]);
    // Seconds: a bucket at 5 ms, every series labelled with the role.
    const buckets = samples.filter((s) => s.name === `${DURATION}_bucket` && s.labels.route === '/api/timer/v1/defs');
    expect(buckets.map((s) => s.labels.le)).toContain('0.005');
    expect(buckets.every((s) => s.labels.role === 'api')).toBe(true);
  });

  it('counts 429s by limit and 401s by reason', () => {
    const burst429 = statuses['burst'].filter((s) => s === 429).length;
    expect(metricBy(samples, 'timer_api_rate_limited_total', 'limit')).toEqual({ app: burst429, auth_failures: 1 });
    expect(metricBy(samples, 'timer_api_auth_failures_total', 'reason')).toEqual({ missing: 1, invalid: 1 });
  });

  it('exports the default process metrics unprefixed', () => {
    expect(samples.some((s) => s.name === 'process_cpu_seconds_total' && s.labels.role === 'api')).toBe(true);
    expect(samples.filter((s) => /^timer_(process|nodejs)_/.test(s.name))).toEqual([]);
  });
});
