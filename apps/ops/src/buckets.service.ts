import type Redis from 'ioredis';
import { MINUTE_MS } from '@timer/contracts';
import { LiveTriggerSlots, SliceIndex, SliceStore, TriggerSlots } from '@timer/redis';

/** One minute as the roles see it: its recorded bucket count and how many of its slices are done. */
export interface MinuteBucketsRow {
  minute: number;
  /** The recorded count; null when nobody recorded one yet (nothing indexed or offered in it). */
  buckets: number | null;
  /** Slices marked done (every bucket once the minute's done-all marker exists); null without a count. */
  done: number | null;
}

/** Reads each minute's bucket count and slice progress from Redis, without writing anything. */
export class BucketsService {
  private readonly index: SliceIndex;
  private readonly store: SliceStore;
  private readonly slots: TriggerSlots;

  constructor(redis: Redis, prefix: string) {
    this.index = new SliceIndex(redis, prefix);
    this.store = new SliceStore(redis, prefix, this.index);
    this.slots = new TriggerSlots(redis, prefix);
  }

  /** The triggers that reported their slots lately (what bounds the migrator's counts), or null when none did. */
  async triggers(nowMs: number): Promise<LiveTriggerSlots | null> {
    return this.slots.live(nowMs);
  }

  /** `count` minutes from the minute `from` (epoch ms of a minute start). */
  async minutes(from: number, count: number): Promise<MinuteBucketsRow[]> {
    const minutes = Array.from({ length: count }, (_, i) => from + i * MINUTE_MS);
    const counts = await Promise.all(minutes.map((m) => this.index.recordedBuckets(m)));
    const recorded = minutes.flatMap((minute, i) => (counts[i] === null ? [] : [{ minute, buckets: counts[i]! }]));
    const states = new Map((await this.store.state(recorded)).map((s) => [s.minute, s]));
    return minutes.map((minute, i) => {
      const s = states.get(minute);
      return { minute, buckets: counts[i], done: s ? (s.allDone ? s.buckets : s.done.filter(Boolean).length) : null };
    });
  }
}
