import { Logger } from '@nestjs/common';
import { FakeClock } from '../../test/fakes';
import { ExecutorConfig } from '../config/executor.env';
import { IDLE_SCAVENGE_MIN_FILL, IDLE_SCAVENGE_OFFSET_MS, IdleScavenge, nextIdleAt, youngFill } from './idle-scavenge.service';

describe('IdleScavenge', () => {
  const T0 = Date.UTC(2030, 0, 1, 12);
  beforeAll(() => Logger.overrideLogger(false));
  afterAll(() => Logger.overrideLogger(['log', 'error', 'warn', 'debug', 'verbose']));
  afterEach(() => jest.useRealTimers());

  it('aims at the offset in the current second, or the next one when it is less than 50 ms away or past', () => {
    expect(nextIdleAt(T0)).toBe(T0 + IDLE_SCAVENGE_OFFSET_MS);
    expect(nextIdleAt(T0 + IDLE_SCAVENGE_OFFSET_MS - 50)).toBe(T0 + IDLE_SCAVENGE_OFFSET_MS);
    expect(nextIdleAt(T0 + IDLE_SCAVENGE_OFFSET_MS - 49)).toBe(T0 + 1_000 + IDLE_SCAVENGE_OFFSET_MS);
    expect(nextIdleAt(T0 + 999)).toBe(T0 + 1_000 + IDLE_SCAVENGE_OFFSET_MS);
  });

  it('scavenges once a second at the offset, only when the young generation is full enough; stops at shutdown', () => {
    jest.useFakeTimers({ now: T0 + 100 });
    const clock = new FakeClock(T0 + 100);
    clock.now = () => Date.now();
    const idle = new IdleScavenge(ExecutorConfig.load({}), clock);
    const at: number[] = [];
    let fill = IDLE_SCAVENGE_MIN_FILL;
    idle.start(() => at.push(Date.now()), () => fill);
    jest.advanceTimersByTime(900);
    fill = IDLE_SCAVENGE_MIN_FILL / 2; // idle: left alone
    jest.advanceTimersByTime(1_000);
    fill = 0.9;
    jest.advanceTimersByTime(1_000);
    idle.onApplicationShutdown();
    jest.advanceTimersByTime(3_000);
    expect(at).toEqual([T0 + IDLE_SCAVENGE_OFFSET_MS, T0 + 2_000 + IDLE_SCAVENGE_OFFSET_MS]);
  });

  it('gives up, without throwing, when the scavenge cannot run', () => {
    jest.useFakeTimers({ now: T0 });
    const clock = new FakeClock(T0);
    clock.now = () => Date.now();
    const idle = new IdleScavenge(ExecutorConfig.load({}), clock);
    let tries = 0;
    idle.start(() => {
      tries++;
      throw new Error('no gc');
    }, () => 1);
    jest.advanceTimersByTime(5_000);
    expect(tries).toBe(1);
  });

  it("reads the young generation's fill from V8", () => {
    const f = youngFill();
    expect(f).toBeGreaterThan(0);
    expect(f).toBeLessThanOrEqual(1);
  });

  it('is on by default and off with TIMER_EXECUTOR_IDLE_SCAVENGE=false', () => {
    expect(ExecutorConfig.load({}).idleScavenge).toBe(true);
    expect(ExecutorConfig.load({ TIMER_EXECUTOR_IDLE_SCAVENGE: 'false' }).idleScavenge).toBe(false);
  });
});
