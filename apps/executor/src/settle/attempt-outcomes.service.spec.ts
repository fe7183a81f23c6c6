import { Logger } from '@nestjs/common';
import { TaskStatus } from '@timer/dal';
import { LEASE, setup, T0, value } from '../../test/fire-pipeline';

describe('settle, through FireService', () => {
  beforeAll(() => Logger.overrideLogger(false));
  afterAll(() => Logger.overrideLogger(['log', 'error', 'warn', 'debug', 'verbose']));

  describe('failures', () => {
    const fail500 = { ok: false, status: 500, costMs: 2, error: 'HTTP 500', output: 'boom', retryable: true };

    it('schedules the next attempt with backoff and keeps the row running, waiting for it', async () => {
      const s = setup();
      s.fires.addRow('7', T0);
      s.callback.results = [fail500];
      expect(await s.service.handle(s.msg(T0))).toBe('retry');
      expect(s.publisher.retries).toHaveLength(1);
      const { message, at } = s.publisher.retries[0];
      expect(message).toEqual(s.msg(T0, 2));
      expect(at).toBeGreaterThanOrEqual(T0 + 800);
      expect(at).toBeLessThanOrEqual(T0 + 1_200);
      expect(s.fires.row('7', T0)).toMatchObject({ status: TaskStatus.Running, attempt: 1, claimedBy: null, claimedUntil: at + LEASE, httpStatus: 500, error: 'HTTP 500' });
      // A duplicate of attempt 1 cannot take it meanwhile; attempt 2 can.
      expect(await s.service.handle(s.msg(T0))).toBe('deferred-held');
      s.clock.current = at;
      s.callback.results = [fail500];
      expect(await s.service.handle(s.msg(T0, 2))).toBe('retry');
      const second = s.publisher.retries[1].at - at;
      expect(second).toBeGreaterThanOrEqual(1_600);
      expect(second).toBeLessThanOrEqual(2_400);
    });

    it('dead-letters and records failed after the last attempt', async () => {
      const s = setup();
      s.fires.addRow('7', T0, { status: TaskStatus.Running, attempt: 2, claimedBy: null, claimedUntil: T0 + LEASE });
      s.callback.results = [fail500];
      expect(await s.service.handle(s.msg(T0, 3))).toBe('failed');
      expect(s.publisher.retries).toHaveLength(0);
      expect(s.publisher.deadLetters).toHaveLength(1);
      expect(s.publisher.deadLetters[0].message).toEqual(s.msg(T0, 3));
      expect(s.publisher.deadLetters[0].properties).toMatchObject({ 'x-timer-error': 'HTTP 500', 'x-timer-attempts': '3', 'x-timer-http-status': '500' });
      expect(s.fires.row('7', T0)).toMatchObject({ status: TaskStatus.Failed, attempt: 3 });
      expect(await value(s.metrics.deadLettered)).toBe(1);
    });

    it('does not retry a non-retryable failure (4xx, refused private address)', async () => {
      const s = setup();
      s.fires.addRow('7', T0);
      s.callback.results = [{ ok: false, costMs: 0, error: 'refusing private address 127.0.0.1', retryable: false }];
      expect(await s.service.handle(s.msg(T0))).toBe('failed');
      expect(s.publisher.retries).toHaveLength(0);
      expect(s.publisher.deadLetters[0].properties['x-timer-reason']).toBe('not retryable');
      expect(s.fires.row('7', T0)).toMatchObject({ status: TaskStatus.Failed, attempt: 1 });
    });

    it('drops its outcome when the claim passed to another executor (fenced)', async () => {
      const s = setup();
      s.fires.addRow('7', T0);
      const steal = s.fires.recordOutcomes.bind(s.fires);
      s.fires.recordOutcomes = async (os) => {
        s.fires.row('7', T0)!.claimedBy = 'thief';
        return steal(os);
      };
      expect(await s.service.handle(s.msg(T0))).toBe('fenced');
      expect(s.fires.row('7', T0)).toMatchObject({ status: TaskStatus.Running, claimedBy: 'thief' });
      expect(await value(s.metrics.fenced)).toBe(1);
    });
  });
});
