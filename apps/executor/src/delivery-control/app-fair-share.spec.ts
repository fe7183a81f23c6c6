import { APP_ACTIVE_LINGER_MS, AppFairShare } from './app-fair-share';

describe('AppFairShare', () => {
  const T = 1_000_000;
  const fill = (s: AppFairShare, app: string, now: number) => {
    let n = 0;
    while (s.tryHold(app, now)) n++;
    return n;
  };

  it('lets an app alone take every handler, and another app in as soon as it comes', () => {
    const s = new AppFairShare(100);
    expect(fill(s, 'a', T)).toBe(100);
    expect(s.tryHold('b', T)).toBe(true);
  });

  it('holds an app to its share while another is active: existing holds stay, new ones wait until it is under', () => {
    const s = new AppFairShare(100);
    fill(s, 'a', T);
    s.tryHold('b', T);
    expect(s.shareOf('a', T)).toBe(50);
    expect(s.tryHold('a', T)).toBe(false);
    for (let i = 0; i < 51; i++) s.release('a', T);
    expect(s.held('a')).toBe(49);
    expect(s.tryHold('a', T)).toBe(true);
    expect(s.tryHold('a', T)).toBe(false);
    expect(fill(s, 'b', T)).toBe(49);
    expect(s.tryHold('a', T, true)).toBe(true); // forced
  });

  it('shares among three, and an app gone quiet stops counting after the linger', () => {
    const s = new AppFairShare(90);
    for (const app of ['a', 'b', 'c']) s.tryHold(app, T);
    expect(s.shareOf('a', T)).toBe(30);
    s.release('c', T);
    expect(s.active(T + APP_ACTIVE_LINGER_MS)).toBe(3);
    s.release('b', T);
    expect(s.active(T + APP_ACTIVE_LINGER_MS + 200)).toBe(1);
    expect(s.shareOf('a', T + APP_ACTIVE_LINGER_MS + 200)).toBe(90);
  });

  it('gives each app at least one handler', () => {
    const s = new AppFairShare(1);
    expect(s.tryHold('a', T)).toBe(true);
    expect(s.tryHold('a', T)).toBe(false);
    expect(s.tryHold('b', T)).toBe(true);
  });
});
