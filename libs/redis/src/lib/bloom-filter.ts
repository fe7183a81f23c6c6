import type Redis from 'ioredis';

// Both scripts take the k offsets of every item of one event-loop turn packed in one argument (4
// bytes each, big-endian: offsets are below 2^32) on one day's bitmap: one command per turn, and one
// argument rather than k per item (7,000 arguments a turn at 1,000 fires cost the client more CPU to
// encode than the rest of the check).

// ARGV = [ttl, k, packed]. Sets each item's k bits and returns, per item, how many were already set;
// gives the day's bitmap its expiry on first write.
const ADD = `
local k = tonumber(ARGV[2])
local s = ARGV[3]
local out = {}
for j = 0, #s / (4 * k) - 1 do
  local before = 0
  for i = 0, k - 1 do
    local a, b, c, d = string.byte(s, 1 + 4 * (j * k + i), 4 + 4 * (j * k + i))
    before = before + redis.call('setbit', KEYS[1], ((a * 256 + b) * 256 + c) * 256 + d, 1)
  end
  out[j + 1] = before
end
if redis.call('pttl', KEYS[1]) < 0 then redis.call('pexpire', KEYS[1], ARGV[1]) end
return out`;

// ARGV = [k, packed]. Per item, 1 when every one of its k bits is set (AND), else 0.
const CONTAINS = `
local k = tonumber(ARGV[1])
local s = ARGV[2]
local out = {}
for j = 0, #s / (4 * k) - 1 do
  local hit = 1
  for i = 0, k - 1 do
    local a, b, c, d = string.byte(s, 1 + 4 * (j * k + i), 4 + 4 * (j * k + i))
    if redis.call('getbit', KEYS[1], ((a * 256 + b) * 256 + c) * 256 + d) == 0 then hit = 0 break end
  end
  out[j + 1] = hit
end
return out`;

/** The scripts as ioredis commands: sent by SHA (EVALSHA), the body only when Redis lacks it. */
interface BloomCommands {
  timerBloomAddMany(key: string, ttlMs: number, k: number, packed: Buffer): Promise<number[]>;
  timerBloomContainsMany(key: string, k: number, packed: Buffer): Promise<number[]>;
}

export interface BloomFilterOptions {
  /** Bits per daily bitmap (memory = bits / 8 bytes per day); at most 2^32. */
  bits: number;
  /** Hash functions per item. */
  hashes: number;
  /** How long a day's bitmap lives after its first write. */
  ttlMs: number;
}

export const DEFAULT_BLOOM: BloomFilterOptions = {
  // 2^27 bits = 16 MiB a day; with 7 hashes ~0.2% false positives at 10 M fires a day.
  bits: 2 ** 27,
  hashes: 7,
  ttlMs: 2 * 24 * 3600_000,
};

const DAY_MS = 86_400_000;
/** Items per script call: bounds the arguments of one command and how long one script holds Redis. */
export const BLOOM_BATCH = 1_000;

interface Waiter {
  offsets: number[];
  resolve: (r: number) => void;
  reject: (e: unknown) => void;
}

/** Calls of one kind waiting for the next turn, by day key. */
type Pending = Map<string, Waiter[]>;

/**
 * The seed's dedupe bloom filter as a Redis bitmap per UTC day of the fire. A "no" is certain and
 * lets the executor skip the database claim's read; a "maybe" must be confirmed by the claim.
 * Membership needs every bit set (AND), unlike the reference implementation's OR.
 *
 * Calls made in the same event-loop turn share one script call per day and kind (up to
 * {@link BLOOM_BATCH} items each): under load the executor asks for hundreds of fires a turn, and
 * one command each cost more CPU (client and server) than the rest of the check.
 */
export class BloomFilter {
  private adds: Pending = new Map();
  private lookups: Pending = new Map();
  private scheduled = false;
  private cachedDay = -1;
  private cachedKey = '';

  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly options: BloomFilterOptions = DEFAULT_BLOOM,
  ) {
    if (!Number.isInteger(options.bits) || options.bits < 1 || options.bits > 2 ** 32) {
      throw new RangeError(`bloom bits must be an integer in [1, 2^32], got ${options.bits}`);
    }
    redis.defineCommand('timerBloomAddMany', { numberOfKeys: 1, lua: ADD });
    redis.defineCommand('timerBloomContainsMany', { numberOfKeys: 1, lua: CONTAINS });
  }

  private get commands(): BloomCommands {
    return this.redis as unknown as BloomCommands;
  }

  /**
   * Bit offsets by double hashing (Kirsch-Mitzenmacher) of two 32-bit MurmurHash3 values: h1 + i * h2
   * stays far below 2^53, exact in a double, so no BigInt and no digest object per item.
   */
  offsets(item: string): number[] {
    const h1 = murmur3(item, 0);
    const h2 = (murmur3(item, h1) | 1) >>> 0;
    const m = this.options.bits;
    const out = new Array<number>(this.options.hashes);
    for (let i = 0; i < out.length; i++) out[i] = (h1 + i * h2) % m;
    return out;
  }

  /** Adds the item; resolves true when it was (probably) there already. */
  async add(item: string, atMs: number): Promise<boolean> {
    return (await this.enqueue(this.adds, item, atMs)) === this.options.hashes;
  }

  /** True when the item may have been added; false when it certainly was not. */
  async mightContain(item: string, atMs: number): Promise<boolean> {
    return (await this.enqueue(this.lookups, item, atMs)) === 1;
  }

  private enqueue(pending: Pending, item: string, atMs: number): Promise<number> {
    return new Promise<number>((resolve, reject) => {
      const key = this.key(atMs);
      const list = pending.get(key);
      const waiter = { offsets: this.offsets(item), resolve, reject };
      if (list) list.push(waiter);
      else pending.set(key, [waiter]);
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    this.scheduled = false;
    const adds = this.adds;
    const lookups = this.lookups;
    this.adds = new Map();
    this.lookups = new Map();
    const k = this.options.hashes;
    for (const [key, all] of adds) {
      for (const waiters of chunks(all)) settle(waiters, this.commands.timerBloomAddMany(key, this.options.ttlMs, k, packed(waiters, k)));
    }
    for (const [key, all] of lookups) {
      for (const waiters of chunks(all)) settle(waiters, this.commands.timerBloomContainsMany(key, k, packed(waiters, k)));
    }
  }

  private key(atMs: number): string {
    const day = Math.floor(atMs / DAY_MS);
    if (day !== this.cachedDay) {
      this.cachedDay = day;
      this.cachedKey = `${this.prefix}bloom:${new Date(day * DAY_MS).toISOString().slice(0, 10)}`;
    }
    return this.cachedKey;
  }
}

function chunks(waiters: Waiter[]): Waiter[][] {
  const out: Waiter[][] = [];
  for (let i = 0; i < waiters.length; i += BLOOM_BATCH) out.push(waiters.slice(i, i + BLOOM_BATCH));
  return out;
}

/** The waiters' offsets, k each, as the scripts read them: 4 bytes big-endian apiece. */
function packed(waiters: Waiter[], k: number): Buffer {
  const buf = Buffer.allocUnsafe(waiters.length * k * 4);
  let at = 0;
  for (const w of waiters) for (let i = 0; i < k; i++, at += 4) buf.writeUInt32BE(w.offsets[i], at);
  return buf;
}

function settle(waiters: Waiter[], reply: Promise<number[]>): void {
  reply.then(
    (r) => waiters.forEach((w, i) => w.resolve(Number(r[i]))),
    (e: unknown) => waiters.forEach((w) => w.reject(e)),
  );
}

/** MurmurHash3's 32-bit mixing over the string's UTF-16 code units (two per block), unsigned. */
function murmur3(s: string, seed: number): number {
  let h = seed >>> 0;
  const n = s.length;
  let i = 0;
  for (; i + 1 < n; i += 2) {
    h ^= scramble(s.charCodeAt(i) | (s.charCodeAt(i + 1) << 16));
    h = (h << 13) | (h >>> 19);
    h = (Math.imul(h, 5) + 0xe6546b64) | 0;
  }
  if (i < n) h ^= scramble(s.charCodeAt(i));
  h ^= n * 2;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

function scramble(k: number): number {
  k = Math.imul(k, 0xcc9e2d51);
  k = (k << 15) | (k >>> 17);
  return Math.imul(k, 0x1b873593);
}
