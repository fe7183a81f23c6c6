import { APP_ACTIVE_LINGER_MS, AppFairShare, HAND_BACK_MAX_MS } from './app-fair-share';

describe('AppFairShare', () => {
  const T = 1_000_000;
  const fill = (s: AppFairShare, app: string, now: number) => {
    let n = 0;
    while (s.tryHold(app, now)) n++;
    return n;
  };

  const hold = (s: AppFairShare, app: string, n: number, now = T) => {
    for (let i = 0; i < n; i++) expect(s.tryHold(app, now)).toBe(true);
  };

  it('lets an app alone take every handler and more (its lanes bound it: nobody waits), and another app in as soon as it comes', () => {
    const s = new AppFairShare(100);
    hold(s, 'a', 150);
    expect(s.held('a')).toBe(150);
    expect(s.tryHold('b', T)).toBe(true);
    expect(s.tryHold('a', T)).toBe(false);
  });

  it('holds an app to its share while another is active: existing holds stay, new ones wait until it is under', () => {
    const s = new AppFairShare(100);
    hold(s, 'a', 100);
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

  it('calls an app heavy while it holds more than half its share', () => {
    const s = new AppFairShare(10);
    for (let i = 0; i < 5; i++) s.tryHold('a', T);
    expect(s.heavy('a', T)).toBe(false); // alone: 5 of 10
    s.tryHold('a', T);
    expect(s.heavy('a', T)).toBe(true);
    s.tryHold('b', T); // two apps: shares of 5
    expect(s.heavy('a', T)).toBe(true);
    expect(s.heavy('b', T)).toBe(false);
    expect(s.heavy('unknown', T)).toBe(false);
  });

  it('says a fire would be handed back only while its app holds its share and another app is active', () => {
    const s = new AppFairShare(4);
    hold(s, 'a', 4);
    expect(s.over('a', T)).toBe(false); // alone
    s.tryHold('b', T);
    expect(s.over('a', T)).toBe(true);
    expect(s.tryHold('a', T)).toBe(false); // as tryHold says
    expect(s.over('b', T)).toBe(false);
    expect(s.over('unknown', T)).toBe(false);
    s.release('a', T);
    s.release('a', T);
    s.release('a', T);
    expect(s.over('a', T)).toBe(false);
    expect(s.tryHold('a', T)).toBe(true);
  });

  it('gives each app at least one handler', () => {
    const s = new AppFairShare(1);
    expect(s.tryHold('a', T)).toBe(true);
    expect(s.tryHold('b', T)).toBe(true);
    expect(s.tryHold('a', T)).toBe(false);
    expect(s.tryHold('b', T)).toBe(false);
  });

  it('lines hand-backs up at the pace the app\'s share frees (share / average hold), from the floor, at most 10 min ahead', () => {
    const s = new AppFairShare(10);
    s.tryHold('a', T);
    s.tryHold('b', T);
    s.release('a', T + 5_000, T); // a's messages hold a handler 5 s: its share of 5 frees one every second
    s.tryHold('a', T + 5_000);
    const now = T + 5_000;
    expect(s.handBackAt('a', now, 1_000)).toBe(now + 1_000);
    expect(s.handBackAt('a', now, 1_000)).toBe(now + 2_000);
    expect(s.handBackAt('a', now, 1_000)).toBe(now + 3_000);
    expect(s.handBackAt('a', now, 10_000)).toBe(now + 10_000); // the floor wins over the line
    expect(s.handBackAt('a', now, 1_000)).toBe(now + 11_000);
    for (let i = 0; i < 1_000; i++) s.handBackAt('a', now, 1_000);
    expect(s.handBackAt('a', now, 1_000)).toBe(now + HAND_BACK_MAX_MS);
    expect(s.handBackAt('unknown', now, 1_000)).toBe(now + 1_000);
  });

  it('paces a slow app by the age of its holds before the first one ends', () => {
    const s = new AppFairShare(10);
    s.tryHold('b', T);
    for (let i = 0; i < 5; i++) s.tryHold('a', T);
    expect(s.handBackAt('a', T + 2_000, 1_000)).toBe(T + 3_000);
    expect(s.handBackAt('a', T + 2_000, 1_000)).toBe(T + 3_400); // 2 s held so far / share 5
  });
});
