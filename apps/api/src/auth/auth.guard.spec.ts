import { ExecutionContext, Logger } from '@nestjs/common';
import type Redis from 'ioredis';
import { Counter, Registry } from 'prom-client';
import { loadConfig, MetricsService } from '@timer/platform';
import { ApiError } from '../common/errors';
import { ApiConfig, ApiEnv } from '../config/api.env';
import { ApiMetrics } from '../metrics/api.metrics';
import { AuthFailureLimiterService } from './auth-failure-limiter.service';
import { AuthGuard } from './auth.guard';
import { AppTokenLookup } from './auth.tokens';
import { AuthedRequest } from './principal';
import { RateLimiterService } from './rate-limiter.service';
import { RedisWindowCounter } from './redis-window';
import { TokenAuthService } from './token-auth.service';

const ADMIN = 'admin-token-for-unit-tests-0123';

/** The two window commands `RedisWindowCounter` defines, over an in-memory map and a clock the test moves. */
class FakeRedis {
  now = 1_000_000;
  down = false;
  readonly windows = new Map<string, { count: number; endsAt: number }>();
  calls = 0;

  async timerWindowIncr(key: string, windowMs: number): Promise<[number, number]> {
    const w = this.live(key) ?? { count: 0, endsAt: this.now + windowMs };
    w.count++;
    this.windows.set(key, w);
    return [w.count, w.endsAt - this.now];
  }

  async timerWindowPeek(key: string): Promise<[number, number]> {
    const w = this.live(key);
    return w ? [w.count, w.endsAt - this.now] : [0, 0];
  }

  private live(key: string): { count: number; endsAt: number } | undefined {
    this.calls++;
    if (this.down) throw new Error('connect ECONNREFUSED');
    const w = this.windows.get(key);
    return w && w.endsAt > this.now ? w : undefined;
  }
}

function setup(env: Record<string, string> = {}) {
  const config = new ApiConfig(loadConfig(ApiEnv, { TIMER_ADMIN_TOKEN: ADMIN, TIMER_AUTH_FAILURES_PER_MIN: '3', TIMER_RATE_LIMIT_PER_SEC: '0', ...env }));
  const redis = new FakeRedis();
  const tokens: AppTokenLookup & { lookups: number } = {
    lookups: 0,
    async appForToken(token: string) {
      this.lookups++;
      return token === 'tmr_good' ? 'billing' : null;
    },
  };
  const windows = new RedisWindowCounter(redis as unknown as Redis, 'p:');
  const metrics = new ApiMetrics({ registry: new Registry() } as MetricsService);
  const guard = new AuthGuard(new TokenAuthService(config, tokens), new RateLimiterService(windows, config), new AuthFailureLimiterService(windows, config), metrics);

  /** Runs the guard for a request from `ip` with `token`: 'ok', or the error's status, code and headers. */
  async function call(token: string | undefined, ip = '::ffff:203.0.113.7') {
    const headers: Record<string, string> = {};
    const req = { ip, headers: token ? { authorization: `Bearer ${token}` } : {}, body: {}, query: {} } as unknown as AuthedRequest;
    const res = { setHeader: (k: string, v: string) => (headers[k] = v) };
    const ctx = { switchToHttp: () => ({ getRequest: () => req, getResponse: () => res }) } as unknown as ExecutionContext;
    try {
      await guard.canActivate(ctx);
      return { status: 200 };
    } catch (e) {
      if (!(e instanceof ApiError)) throw e;
      return { status: e.status, code: e.code, msg: e.message, retryAfter: e.headers['Retry-After'] };
    }
  }
  return { call, redis, tokens, metrics };
}

/** A counter's values by the value of its one label. */
async function byLabel(counter: Counter<string>): Promise<Record<string, number>> {
  return Object.fromEntries((await counter.get()).values.map((v) => [Object.values(v.labels)[0], v.value]));
}

describe('AuthGuard: failed authentications per client address', () => {
  it('answers 429 with Retry-After to failures past N in the minute, never to a valid token from that address', async () => {
    const { call, redis, tokens } = setup();
    for (let i = 0; i < 3; i++) expect((await call('tmr_guess' + i)).status).toBe(401);
    redis.now += 15_000;
    const refused = await call('tmr_guess');
    expect(refused).toEqual({ status: 429, code: 42901, msg: 'too many failed authentications from this address (3 per minute); retry in 45 s', retryAfter: '45' });
    expect((await call(undefined)).status).toBe(429);
    expect((await call('tmr_good')).status).toBe(200);
    expect((await call(ADMIN)).status).toBe(200);
    expect(tokens.lookups).toBe(5);
    // The refusals do not extend the window: once it ends, failures answer 401 again.
    redis.now += 45_000;
    expect((await call('tmr_guess')).status).toBe(401);
  });

  it('lets a hundred failures from one address lock out neither the admin nor an app token', async () => {
    const { call } = setup();
    for (let i = 0; i < 100; i++) await call(undefined);
    expect((await call(undefined)).status).toBe(429);
    expect((await call(ADMIN)).status).toBe(200);
    expect((await call('tmr_good')).status).toBe(200);
  });

  it('counts per address: IPv4 as such or IPv4-mapped alike, IPv6 per /64', async () => {
    const { call } = setup();
    await call('bad', '198.51.100.1');
    await call('bad', '::ffff:198.51.100.1');
    await call('bad', '198.51.100.1');
    expect((await call('bad', '198.51.100.1')).status).toBe(429);
    expect((await call('bad', '198.51.100.2')).status).toBe(401);
    for (const host of ['1', '2', '3']) await call('bad', `2001:db8:5:6::${host}`);
    expect((await call('bad', '2001:db8:5:6:ffff::9')).status).toBe(429);
    expect((await call('bad', '2001:db8:5:7::1')).status).toBe(401);
  });

  it('does not count successful requests, nor look them up in Redis', async () => {
    const { call, redis } = setup();
    for (let i = 0; i < 20; i++) expect((await call(i % 2 ? ADMIN : 'tmr_good')).status).toBe(200);
    expect(redis.calls).toBe(0);
    expect((await call('bad')).status).toBe(401);
    expect((await call('bad')).status).toBe(401);
    expect((await call('bad')).status).toBe(401);
    expect((await call('bad')).status).toBe(429);
  });

  it('fails open when Redis is down: failures answer 401, never 429 (one warning, not one per request)', async () => {
    const warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    const { call, redis } = setup();
    redis.down = true;
    for (let i = 0; i < 10; i++) expect((await call('bad')).status).toBe(401);
    expect((await call(ADMIN)).status).toBe(200);
    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn.mock.calls[0][0]).toMatch(/failed-authentication limit not enforced \(Redis error\)/);
    warn.mockRestore();
  });

  it('is off with TIMER_AUTH_FAILURES_PER_MIN=0 or TIMER_AUTH_DISABLED=true (no Redis call at all)', async () => {
    const envs: Record<string, string>[] = [{ TIMER_AUTH_FAILURES_PER_MIN: '0' }, { TIMER_AUTH_DISABLED: 'true' }];
    for (const env of envs) {
      const { call, redis } = setup(env);
      for (let i = 0; i < 10; i++) await call('bad');
      expect(redis.calls).toBe(0);
    }
  });
});

describe('AuthGuard: metrics', () => {
  it('counts each 401 by reason and each 429 by the limit that answered it', async () => {
    const { call, metrics, redis } = setup({ TIMER_RATE_LIMIT_PER_SEC: '2' });
    expect(await byLabel(metrics.authFailures)).toEqual({ missing: 0, invalid: 0 });
    expect(await byLabel(metrics.rateLimited)).toEqual({ app: 0, auth_failures: 0 });
    expect((await call(undefined)).status).toBe(401);
    expect((await call('tmr_guess')).status).toBe(401);
    expect((await call('tmr_guess')).status).toBe(401);
    expect((await call('tmr_guess')).status).toBe(429);
    expect(await byLabel(metrics.authFailures)).toEqual({ missing: 1, invalid: 2 });

    redis.now += 60_000;
    for (let i = 0; i < 3; i++) await call('tmr_good', '198.51.100.9');
    expect(await byLabel(metrics.rateLimited)).toEqual({ app: 1, auth_failures: 1 });
    expect(await byLabel(metrics.authFailures)).toEqual({ missing: 1, invalid: 2 });
  });

  it('counts 401s also when the failed-authentication limit is off', async () => {
    const { call, metrics } = setup({ TIMER_AUTH_FAILURES_PER_MIN: '0' });
    for (let i = 0; i < 5; i++) expect((await call('bad')).status).toBe(401);
    expect(await byLabel(metrics.authFailures)).toEqual({ missing: 0, invalid: 5 });
    expect(await byLabel(metrics.rateLimited)).toEqual({ app: 0, auth_failures: 0 });
  });
});
