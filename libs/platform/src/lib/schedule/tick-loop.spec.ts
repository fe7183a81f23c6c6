import { Logger } from '@nestjs/common';
import { TickLoop } from './tick-loop';

describe('TickLoop', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('ticks at start and every period, never two at once, and survives a failing tick', async () => {
    let running = 0;
    let maxRunning = 0;
    let ticks = 0;
    const loop = new TickLoop(
      1_000,
      async () => {
        ticks++;
        running++;
        maxRunning = Math.max(maxRunning, running);
        await new Promise((r) => setTimeout(r, 1_500)); // slower than the period
        running--;
        if (ticks === 2) throw new Error('boom');
      },
      new Logger('test', { timestamp: false }),
    );
    jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    loop.start();
    await jest.advanceTimersByTimeAsync(6_100);
    const stopping = loop.stop();
    await jest.advanceTimersByTimeAsync(2_000);
    await stopping;
    expect(maxRunning).toBe(1);
    expect(ticks).toBe(5); // at 0, 1.5, 3, 4.5, 6 s: each waits for the previous one
    const after = ticks;
    await jest.advanceTimersByTimeAsync(5_000);
    expect(ticks).toBe(after);
  });
});
