import type Redis from 'ioredis';
import { MINUTE_MS } from '@timer/contracts';
import { LUA_SCRIPTS } from './lua-scripts';
import { RedisKeys } from './redis-keys';
import type { SliceIndex } from './slice-index';

/** Header bits before a filter's item bits (m, k, capacity, items added; see `lua/bloomAdd-1.lua`). */
const HEADER_BITS = 128;
/** Largest m: every bit offset (header included) must stay below Redis's 2^32 bits of a string. */
export const BLOOM_MAX_BITS = 2 ** 32 - HEADER_BITS - 1;
/** A slice sized for fewer fires than this gets this many: a handful of bytes more, and room for fires added late. */
export const BLOOM_MIN_FIRES = 1_024;
/**
 * A filter holding more than its capacity times this answers nothing ({@link SliceBloom.check}: null).
 * At 1.5x the capacity a filter sized for 1 % answers "maybe" to ~5.7 % of what it never saw; past it
 * the reads it would save shrink while the false "maybe"s (each a read) grow.
 */
export const BLOOM_OVERFULL_FACTOR = 1.5;
/**
 * How long a slice's filter lives after its minute ends: the duplicates worth catching come within
 * it (a redelivery within seconds, a fair-delivery hand-back within about an hour, the default misfire
 * window of an hour). Absolute (PEXPIREAT), so every writer gives a slice the same end.
 */
export const BLOOM_RETAIN_MS = 2 * 3_600_000;

/** A filter's geometry: m bits and k hash functions for `fires` items at false-positive rate `p`. */
export interface BloomSize {
  fires: number;
  bits: number;
  hashes: number;
}

/**
 * The standard sizing of a bloom filter for n items at false-positive rate p (docs/scaling.md, "Bloom
 * filter per slice"): m = ceil(-n ln p / (ln 2)^2) bits and k = round((m / n) ln 2) hash functions, which
 * minimises m for p; the rate after n items is then (1 - e^(-kn/m))^k ~ p. n is at least
 * {@link BLOOM_MIN_FIRES}; m at most {@link BLOOM_MAX_BITS}.
 */
export function bloomSize(fires: number, falsePositiveRate: number): BloomSize {
  if (!(falsePositiveRate > 0 && falsePositiveRate < 1)) throw new RangeError(`false-positive rate must be in (0, 1), got ${falsePositiveRate}`);
  const n = Math.max(BLOOM_MIN_FIRES, Math.ceil(Number.isFinite(fires) ? fires : 0));
  const bits = Math.min(BLOOM_MAX_BITS, Math.ceil((-n * Math.log(falsePositiveRate)) / Math.LN2 ** 2));
  const hashes = Math.max(1, Math.min(32, Math.round((bits / n) * Math.LN2)));
  return { fires: n, bits, hashes };
}

/** The expected false-positive rate of a filter of `bits` and `hashes` after `items` distinct items. */
export function bloomFalsePositiveRate(bits: number, hashes: number, items: number): number {
  return (1 - Math.exp((-hashes * items) / bits)) ** hashes;
}

/** MurmurHash3 (x86, 32-bit) of an ASCII string (fire ids are `<timerId>-<runAtMs>`). */
export function murmur3(s: string, seed: number): number {
  let h = seed >>> 0;
  const n = s.length;
  const blocks = n & ~3;
  for (let i = 0; i < blocks; i += 4) {
    let k = (s.charCodeAt(i) & 0xff) | ((s.charCodeAt(i + 1) & 0xff) << 8) | ((s.charCodeAt(i + 2) & 0xff) << 16) | ((s.charCodeAt(i + 3) & 0xff) << 24);
    k = Math.imul(k, 0xcc9e2d51);
    k = (k << 15) | (k >>> 17);
    k = Math.imul(k, 0x1b873593);
    h ^= k;
    h = (h << 13) | (h >>> 19);
    h = (Math.imul(h, 5) + 0xe6546b64) | 0;
  }
  const rest = n & 3;
  if (rest > 0) {
    let k = s.charCodeAt(blocks) & 0xff;
    if (rest > 1) k |= (s.charCodeAt(blocks + 1) & 0xff) << 8;
    if (rest > 2) k |= (s.charCodeAt(blocks + 2) & 0xff) << 16;
    k = Math.imul(k, 0xcc9e2d51);
    k = (k << 15) | (k >>> 17);
    k = Math.imul(k, 0x1b873593);
    h ^= k;
  }
  h ^= n;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/**
 * The items' two 32-bit hashes, 8 bytes each (h1, h2 big-endian): the scripts derive the k bit offsets
 * by double hashing, h1 + i * h2 mod m, from the m and k in the filter's header. h2 is made odd, so it
 * is never 0 and the k offsets differ.
 */
export function packHashes(ids: readonly string[]): Buffer {
  const buf = Buffer.allocUnsafe(8 * ids.length);
  ids.forEach((id, j) => {
    buf.writeUInt32BE(murmur3(id, 0x9747b28c), 8 * j);
    buf.writeUInt32BE((murmur3(id, 0x5bd1e995) | 1) >>> 0, 8 * j + 4);
  });
  return buf;
}

/** An item and the time that puts it in its slice (a fire: its id and run_at). */
export interface SliceItem {
  at: number;
  id: string;
}

export interface SliceBloomOptions {
  /** The false-positive rate each slice's filter is sized for. */
  falsePositiveRate: number;
}

interface BloomCommands {
  timerBloomAdd(key: string, expireAtMs: number, bits: number, hashes: number, fires: number, packed: Buffer): Promise<number>;
  timerBloomCheck(key: string, overfull: number, packed: Buffer): Promise<number[]>;
}

/**
 * A bloom filter per slice (one UTC minute: {@link RedisKeys.sliceBloom}), sized from the slice's fire
 * count for a stated false-positive rate ({@link bloomSize}) by its first writer, expiring
 * {@link BLOOM_RETAIN_MS} after its minute. Writes and checks of many items take one round trip: one
 * script call per slice, pipelined. A missing filter answers "not known", never "not added": a caller
 * decides then as if there were no filter.
 */
export class SliceBloom {
  private readonly keys: RedisKeys;

  constructor(
    private readonly redis: Redis,
    prefix: string,
    private readonly options: SliceBloomOptions,
  ) {
    this.keys = new RedisKeys(prefix);
    bloomSize(BLOOM_MIN_FIRES, options.falsePositiveRate); // a bad rate fails here, not at the first add
    redis.defineCommand('timerBloomAdd', LUA_SCRIPTS.bloomAdd);
    redis.defineCommand('timerBloomCheck', LUA_SCRIPTS.bloomCheck);
  }

  /** The slice (minute start) of an epoch ms. */
  static sliceOf(atMs: number): number {
    return Math.floor(atMs / MINUTE_MS) * MINUTE_MS;
  }

  /**
   * Adds the items, one script call per slice in one pipeline. `firesOf(minute)` is the slice's fire
   * count, asked only for a slice not sized yet by this process (the filter's first writer sizes it;
   * later ones use the header). Resolves with the items added.
   */
  async add(items: readonly SliceItem[], firesOf: (minute: number) => number | Promise<number>): Promise<number> {
    const bySlice = groupBySlice(items);
    if (bySlice.size === 0) return 0;
    const sizes = await Promise.all([...bySlice.keys()].map(async (minute) => bloomSize(await firesOf(minute), this.options.falsePositiveRate)));
    const pipeline = this.redis.pipeline() as unknown as BloomCommands & { exec(): Promise<[Error | null, unknown][] | null> };
    let i = 0;
    for (const [minute, ids] of bySlice) {
      const size = sizes[i++];
      pipeline.timerBloomAdd(this.keys.sliceBloom(minute), minute + MINUTE_MS + BLOOM_RETAIN_MS, size.bits, size.hashes, size.fires, packHashes(ids));
    }
    const replies = (await pipeline.exec()) ?? [];
    let added = 0;
    for (const [err, reply] of replies) {
      if (err) throw err;
      added += Number(reply);
    }
    return added;
  }

  /**
   * Per item: true "maybe added" (a false positive at about the stated rate), false "certainly not
   * added", null "not known" (the slice's filter is missing or overfull). One pipeline of one script
   * call per slice.
   */
  async check(items: readonly SliceItem[]): Promise<(boolean | null)[]> {
    const bySlice = groupBySlice(items);
    if (bySlice.size === 0) return [];
    const pipeline = this.redis.pipeline() as unknown as BloomCommands & { exec(): Promise<[Error | null, unknown][] | null> };
    for (const [minute, ids] of bySlice) pipeline.timerBloomCheck(this.keys.sliceBloom(minute), BLOOM_OVERFULL_FACTOR, packHashes(ids));
    const replies = (await pipeline.exec()) ?? [];
    const answers = new Map<number, (boolean | null)[]>();
    let i = 0;
    for (const [minute, ids] of bySlice) {
      const [err, reply] = replies[i++] ?? [new Error('no reply'), null];
      if (err) throw err;
      const r = (reply as unknown[]).map(Number);
      answers.set(minute, r[0] === 0 ? ids.map((_, j) => r[j + 1] === 1) : ids.map(() => null));
    }
    const taken = new Map<number, number>();
    return items.map((it) => {
      const minute = SliceBloom.sliceOf(it.at);
      const j = taken.get(minute) ?? 0;
      taken.set(minute, j + 1);
      return (answers.get(minute) as (boolean | null)[])[j];
    });
  }

  /**
   * A minute's fires in the slice index (the sum of its buckets' sorted sets, one pipelined read): the
   * slice's size while its minute is being delivered; 0 once the slices are done and deleted.
   */
  async indexedFires(index: SliceIndex, minute: number): Promise<number> {
    const buckets = await index.recordedBuckets(minute);
    if (buckets === null) return 0;
    const pipeline = this.redis.pipeline();
    for (let b = 0; b < buckets; b++) pipeline.zcard(index.sliceKey(minute, b));
    const replies = (await pipeline.exec()) ?? [];
    return replies.reduce((sum, [err, n]) => sum + (err ? 0 : Number(n)), 0);
  }

  /** A slice's filter's geometry and fill, from its header; null when it does not exist. */
  async describe(minute: number): Promise<{ bits: number; hashes: number; fires: number; added: number; ttlMs: number } | null> {
    const key = this.keys.sliceBloom(SliceBloom.sliceOf(minute));
    const [header, ttl] = await Promise.all([this.redis.call('BITFIELD', key, 'GET', 'u32', 0, 'GET', 'u8', 32, 'GET', 'u32', 64, 'GET', 'u32', 96), this.redis.pttl(key)]);
    if (ttl === -2) return null;
    const [bits, hashes, fires, added] = (header as number[]).map(Number);
    return { bits, hashes, fires, added, ttlMs: Number(ttl) };
  }
}

function groupBySlice(items: readonly SliceItem[]): Map<number, string[]> {
  const by = new Map<number, string[]>();
  for (const it of items) {
    const minute = SliceBloom.sliceOf(it.at);
    const ids = by.get(minute);
    if (ids) ids.push(it.id);
    else by.set(minute, [it.id]);
  }
  return by;
}
