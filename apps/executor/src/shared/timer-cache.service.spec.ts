import { Logger } from '@nestjs/common';
import { TimerStatus } from '@timer/dal';
import { timerDef } from '../../test/fakes';
import { MISS_BATCH } from './timer-cache.service';
import { setup, T0 } from '../../test/fire-pipeline';

describe('TimerCache, through FireService', () => {
  beforeAll(() => Logger.overrideLogger(false));
  afterAll(() => Logger.overrideLogger(['log', 'error', 'warn', 'debug', 'verbose']));

  describe('definition cache', () => {
    it('uses a cached definition within the TTL and reloads it after', async () => {
      const s = setup();
      expect((await s.cache.get('7'))?.timer.status).toBe(TimerStatus.Enabled);
      s.fires.defs.set('7', timerDef('7', { status: TimerStatus.Disabled }));
      s.clock.current += 1_999;
      expect((await s.cache.get('7'))?.timer.status).toBe(TimerStatus.Enabled);
      s.clock.current += 1;
      expect((await s.cache.get('7'))?.timer.status).toBe(TimerStatus.Disabled);
    });

    it('keeps a definition past the TTL while change polls see no change, and drops it at the poll after a change', async () => {
      const s = setup();
      await s.cache.pollChanges(); // sets the watermark
      expect((await s.cache.get('7'))?.timer.status).toBe(TimerStatus.Enabled);
      s.fires.defs.set('7', timerDef('7', { status: TimerStatus.Disabled }));
      s.clock.current += 10_000;
      await s.cache.pollChanges(); // nothing touched: the entry stays current
      expect((await s.cache.get('7'))?.timer.status).toBe(TimerStatus.Enabled);
      s.fires.touch('7');
      await s.cache.pollChanges();
      expect((await s.cache.get('7'))?.timer.status).toBe(TimerStatus.Disabled);
    });

    it('drops the definitions of an app whose signing secret changed', async () => {
      const s = setup();
      await s.cache.pollChanges();
      expect((await s.cache.get('7'))?.signingSecret).toBeNull();
      s.fires.defs.set('7', timerDef('7', {}, 'new-secret'));
      s.fires.touch('app:other');
      await s.cache.pollChanges();
      expect((await s.cache.get('7'))?.signingSecret).toBeNull();
      s.fires.touch('app:app');
      await s.cache.pollChanges();
      expect((await s.cache.get('7'))?.signingSecret).toBe('new-secret');
    });

    it('falls back to the TTL when change polls fail or stop', async () => {
      const s = setup();
      await s.cache.pollChanges();
      await s.cache.pollChanges();
      await s.cache.get('7');
      s.fires.defs.set('7', timerDef('7', { status: TimerStatus.Disabled }));
      s.fires.failChanges = true;
      s.clock.current += 1_999;
      await s.cache.pollChanges();
      expect((await s.cache.get('7'))?.timer.status).toBe(TimerStatus.Enabled);
      s.clock.current += 1; // the last good poll is now a TTL old
      expect((await s.cache.get('7'))?.timer.status).toBe(TimerStatus.Disabled);
    });

    it('does not put back a definition whose load began before a poll that dropped it', async () => {
      const s = setup();
      await s.cache.pollChanges();
      let release: () => void = () => undefined;
      const orig = s.fires.definitions.bind(s.fires);
      let began: () => void = () => undefined;
      const reading = new Promise<void>((r) => (began = r));
      s.fires.definitions = async (ids) => {
        const defs = await orig(ids); // read before the change
        began();
        await new Promise<void>((r) => (release = r));
        return defs;
      };
      const loading = s.cache.get('7');
      await reading;
      s.fires.defs.set('7', timerDef('7', { status: TimerStatus.Disabled }));
      s.fires.touch('7');
      s.clock.current += 1;
      await s.cache.pollChanges();
      release();
      expect((await loading)?.timer.status).toBe(TimerStatus.Enabled); // that caller got what it read
      s.fires.definitions = orig;
      expect((await s.cache.get('7'))?.timer.status).toBe(TimerStatus.Disabled); // but it was not cached
    });

    it('shares one load among concurrent misses', async () => {
      const s = setup();
      await Promise.all([s.cache.get('7'), s.cache.get('7'), s.cache.get('7')]);
      expect(s.fires.definitionQueries).toBe(1);
    });

    it('loads the misses of one turn in one query, at most MISS_BATCH ids each, an absent timer as null', async () => {
      const s = setup();
      const ids = Array.from({ length: MISS_BATCH + 10 }, (_, i) => String(100 + i));
      for (const id of ids) s.fires.defs.set(id, timerDef(id));
      const got = await Promise.all([...ids, '99999'].map((id) => s.cache.get(id)));
      expect(got.slice(0, -1).map((d) => d?.timer.id)).toEqual(ids);
      expect(got[got.length - 1]).toBeNull();
      expect(s.fires.definitionQueries).toBe(2);
      // Cached: no further query for a found one; an absent one is read again (it may be a row not committed yet).
      expect((await s.cache.get('100'))?.timer.id).toBe('100');
      expect(s.fires.definitionQueries).toBe(2);
      expect(await s.cache.get('99999')).toBeNull();
      expect(s.fires.definitionQueries).toBe(3);
      s.fires.defs.set('99999', timerDef('99999'));
      expect(s.cache.peek('99999')).toBeUndefined();
      expect((await s.cache.get('99999'))?.timer.id).toBe('99999');
    });

    it('fails every waiter of a failed miss query, and the next miss queries again', async () => {
      const s = setup();
      const orig = s.fires.definitions.bind(s.fires);
      s.fires.definitions = async () => {
        throw new Error('connection lost');
      };
      const results = await Promise.allSettled([s.cache.get('7'), s.cache.get('8')]);
      expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
      s.fires.definitions = orig;
      expect((await s.cache.get('7'))?.timer.id).toBe('7');
    });

    it('prefetches the timers with pending fires due within step2', async () => {
      const s = setup();
      s.fires.defs.set('8', timerDef('8'));
      s.fires.defs.set('9', timerDef('9'));
      s.fires.addRow('8', T0 + 30_000);
      s.fires.addRow('9', T0 + 90_000);
      expect(await s.cache.prefetch()).toBe(1);
      const before = s.fires.definitionQueries;
      expect((await s.cache.get('8'))?.timer.id).toBe('8');
      expect(s.fires.definitionQueries).toBe(before);
    });
  });
});
