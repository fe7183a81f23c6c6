import type Redis from 'ioredis';
import { ProcessReports } from './process-reports';
import { RedisKeys } from './redis-keys';

/** A report older than this is of a trigger that stopped or stalls: its slots no longer count. */
export const TRIGGER_SLOTS_FRESH_MS = 15_000;
/** A report older than this is deleted by the next reader (the trigger died without removing it). */
export const TRIGGER_SLOTS_FORGET_MS = 10 * 60_000;

/** The triggers that reported lately: how many, their slots together, and the most one of them has. */
export interface LiveTriggerSlots {
  processes: number;
  slots: number;
  largest: number;
}

/**
 * The slice slots of the live triggers: each trigger process writes, every few seconds, how many
 * slices it walks at once (`triggerSlots` in {@link RedisKeys}, a hash field per process); the migrator
 * reads them to bound how many buckets it gives a minute (docs/scaling.md, "Buckets per minute"). The
 * one owner of the key.
 */
export class TriggerSlots extends ProcessReports {
  constructor(redis: Redis, prefix: string) {
    super(redis, new RedisKeys(prefix).triggerSlots(), TRIGGER_SLOTS_FRESH_MS, TRIGGER_SLOTS_FORGET_MS);
  }

  /**
   * The triggers that reported within {@link TRIGGER_SLOTS_FRESH_MS} of `nowMs`, or null when none did.
   * Deletes the reports older than {@link TRIGGER_SLOTS_FORGET_MS}.
   */
  async live(nowMs: number): Promise<LiveTriggerSlots | null> {
    const slots = await this.fresh(nowMs);
    if (slots.length === 0) return null;
    return { processes: slots.length, slots: slots.reduce((a, b) => a + b, 0), largest: Math.max(...slots) };
  }
}

/**
 * The most buckets a minute may get with these triggers: a third of the slots left once the largest
 * trigger is gone. A minute's slices hold a slot each for the whole minute and the next minute's are
 * taken before it starts, so two minutes take two thirds; the last third is for the scheduler's
 * catch-up slices (`TIMER_SCHEDULER_CATCHUP_SLICES`, 8 by default). Losing any one trigger then leaves
 * room for every slice. Null: no trigger reported, nothing to bound by.
 */
export function bucketsForTriggers(live: LiveTriggerSlots | null): number | null {
  if (live === null) return null;
  return Math.floor((live.slots - live.largest) / 3);
}
