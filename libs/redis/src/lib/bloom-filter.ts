import { createHash } from 'crypto';
import type Redis from 'ioredis';

// Sets k bits and reports how many were already set, in one round trip and atomically, and gives
// the day's bitmap its expiry on first write.
const ADD = `
local before = 0
for i = 2, #ARGV do before = before + redis.call('setbit', KEYS[1], ARGV[i], 1) end
if redis.call('pttl', KEYS[1]) < 0 then redis.call('pexpire', KEYS[1], ARGV[1]) end
return before`;

// True (1) when every one of the k bits is set: one command instead of k GETBITs.
const CONTAINS = `
for i = 1, #ARGV do if redis.call('getbit', KEYS[1], ARGV[i]) == 0 then return 0 end end
return 1`;

/** The scripts as ioredis commands: sent by SHA (EVALSHA), the body only when Redis lacks it. */
interface BloomCommands {
  timerBloomAdd(key: string, ttlMs: number, ...offsets: number[]): Promise<number>;
  timerBloomContains(key: string, ...offsets: number[]): Promise<number>;
}

export interface BloomFilterOptions {
  /** Bits per daily bitmap (memory = bits / 8 bytes per day). */
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

/**
 * The seed's dedupe bloom filter as a Redis bitmap per UTC day of the fire. A "no" is certain and
 * lets the executor skip the database claim's read; a "maybe" must be confirmed by the claim.
 * Membership needs every bit set (AND), unlike the reference implementation's OR.
 */
export class BloomFilter {
  constructor(
    private readonly redis: Redis,
    private readonly prefix: string,
    private readonly options: BloomFilterOptions = DEFAULT_BLOOM,
  ) {
    redis.defineCommand('timerBloomAdd', { numberOfKeys: 1, lua: ADD });
    redis.defineCommand('timerBloomContains', { numberOfKeys: 1, lua: CONTAINS });
  }

  private get commands(): BloomCommands {
    return this.redis as unknown as BloomCommands;
  }

  /** Bit offsets by double hashing (Kirsch-Mitzenmacher) of SHA-256. */
  offsets(item: string): number[] {
    const digest = createHash('sha256').update(item).digest();
    const h1 = digest.readBigUInt64BE(0);
    const h2 = digest.readBigUInt64BE(8) | 1n;
    const m = BigInt(this.options.bits);
    const out: number[] = [];
    for (let i = 0n; i < BigInt(this.options.hashes); i++) out.push(Number((h1 + i * h2) % m));
    return out;
  }

  /** Adds the item; resolves true when it was (probably) there already. */
  async add(item: string, atMs: number): Promise<boolean> {
    const before = await this.commands.timerBloomAdd(this.key(atMs), this.options.ttlMs, ...this.offsets(item));
    return Number(before) === this.options.hashes;
  }

  /** True when the item may have been added; false when it certainly was not. */
  async mightContain(item: string, atMs: number): Promise<boolean> {
    return Number(await this.commands.timerBloomContains(this.key(atMs), ...this.offsets(item))) === 1;
  }

  private key(atMs: number): string {
    return `${this.prefix}bloom:${new Date(atMs).toISOString().slice(0, 10)}`;
  }
}
