import type Redis from 'ioredis';
import { FireRef, fireId, fireIdPrefix, isMinuteStart, isTimerId, MAX_BUCKETS, MINUTE_MS, minuteOf, parseFireId } from '@timer/contracts';
import { LUA_SCRIPTS } from './lua-scripts';
import { RedisKeys } from './redis-keys';

export interface SliceIndexOptions {
  /** Buckets of a minute recorded on its first use, and the fewest {@link SliceIndex.bucketsFor} gives. Default 10. */
  defaultBuckets?: number;
  /** Fires of a minute per bucket added to the default ({@link SliceIndex.bucketsFor}); 0 = never more than the default. Default 200. */
  bucketFires?: number;
  /** The most buckets {@link SliceIndex.bucketsFor} gives, at least `defaultBuckets`. Default `defaultBuckets`: no growth unless given. */
  maxBuckets?: number;
  /**
   * How long a minute's keys live after the minute ends, so a trigger that is late after downtime
   * still finds them. Default 24 h.
   */
  retentionMs?: number;
}

/** The defaults of {@link SliceIndexOptions}, and of `TIMER_SLICE_BUCKETS` and `TIMER_SLICE_BUCKET_FIRES`. */
export const SLICE_BUCKETS_DEFAULT = 10;
export const SLICE_BUCKET_FIRES_DEFAULT = 200;

/** How a minute's bucket count follows its fires: `defaultBuckets` plus one per `bucketFires`, at most `maxBuckets`. */
export type BucketPolicy = Required<Pick<SliceIndexOptions, 'defaultBuckets' | 'bucketFires' | 'maxBuckets'>>;

/**
 * Buckets of a minute with `fires` fires: default + floor(fires / bucketFires), clamped to [default,
 * max]. A minute with fewer fires than `bucketFires` (or none) keeps the default.
 */
export function bucketsForFires(fires: number, policy: BucketPolicy): number {
  const { defaultBuckets, bucketFires, maxBuckets } = policy;
  const extra = bucketFires > 0 && fires > 0 ? Math.floor(fires / bucketFires) : 0;
  return Math.max(defaultBuckets, Math.min(maxBuckets, defaultBuckets + extra));
}

/** Members per ZADD / ZREM command, and commands per pipeline round trip. */
const CHUNK = 1_000;

/**
 * The hot index of near-future fires: one sorted set per 2-D slice (minute, bucket).
 *
 * Keys ({@link RedisKeys}): `slice` (a ZSET per slice, member = the fire id), where `minute` is the epoch
 * ms of the minute's start (UTC) and `bucket` = BigInt(timerId) % buckets(minute); and `sliceBuckets`,
 * the bucket count of that minute, written once (SET NX) and read by everyone after, so all roles agree.
 * The migrator writes it from the minute's fire count ({@link recordBuckets}) before it indexes any of
 * them; a role that uses a minute nobody recorded yet records the default. Both expire at the
 * minute's end + `retentionMs` (PEXPIREAT; re-adding is idempotent).
 */
export class SliceIndex {
  private readonly defaultBuckets: number;
  private readonly policy: BucketPolicy;
  private readonly retentionMs: number;
  /** Bucket counts already read; a minute's count never changes once recorded. */
  private readonly knownBuckets = new Map<number, number>();
  private readonly keys: RedisKeys;

  constructor(
    private readonly redis: Redis,
    prefix: string,
    options: SliceIndexOptions = {},
  ) {
    this.keys = new RedisKeys(prefix);
    this.defaultBuckets = options.defaultBuckets ?? SLICE_BUCKETS_DEFAULT;
    this.retentionMs = options.retentionMs ?? 24 * 3_600_000;
    if (!Number.isSafeInteger(this.defaultBuckets) || this.defaultBuckets < 1 || this.defaultBuckets > MAX_BUCKETS) {
      throw new RangeError(`defaultBuckets must be an integer in [1, ${MAX_BUCKETS}]`);
    }
    const maxBuckets = options.maxBuckets ?? this.defaultBuckets;
    if (!Number.isSafeInteger(maxBuckets) || maxBuckets < this.defaultBuckets || maxBuckets > MAX_BUCKETS) {
      throw new RangeError(`maxBuckets must be an integer in [defaultBuckets, ${MAX_BUCKETS}]`);
    }
    const bucketFires = options.bucketFires ?? SLICE_BUCKET_FIRES_DEFAULT;
    if (!Number.isSafeInteger(bucketFires) || bucketFires < 0) throw new RangeError('bucketFires must be a non-negative integer');
    this.policy = { defaultBuckets: this.defaultBuckets, bucketFires, maxBuckets };
    if (!Number.isSafeInteger(this.retentionMs) || this.retentionMs < 0) throw new RangeError('retentionMs must be a non-negative integer');
  }

  /** The bucket of a timer in a minute of `buckets` buckets: BigInt(timerId) % buckets (stable). */
  bucketOf(timerId: string, buckets: number): number {
    if (!isTimerId(timerId)) throw new RangeError(`invalid timer id ${JSON.stringify(timerId)}`);
    return Number(BigInt(timerId) % BigInt(buckets));
  }

  /** ZSET key of a slice. */
  sliceKey(minute: number, bucket: number): string {
    return this.keys.slice(minute, bucket);
  }

  /** Key of a minute's recorded bucket count. */
  bucketsKey(minute: number): string {
    return this.keys.sliceBuckets(minute);
  }

  /**
   * Buckets of a minute with `fires` fires ({@link bucketsForFires} with this index's options), at most
   * `atMost` when given (never below the default).
   */
  bucketsFor(fires: number, atMost?: number): number {
    return bucketsForFires(fires, atMost === undefined ? this.policy : { ...this.policy, maxBuckets: Math.max(this.defaultBuckets, Math.min(this.policy.maxBuckets, atMost)) });
  }

  /**
   * Records each minute's bucket count from its fire count ({@link bucketsFor}, at most `atMost`), with
   * SET NX: a minute already recorded keeps its count. Call it before indexing any fire of those minutes.
   * Returns the count in force per minute (minutes past their retention are left out: nothing is indexed there).
   */
  async recordBuckets(firesByMinute: ReadonlyMap<number, number>, atMost?: number): Promise<Map<number, number>> {
    for (const m of firesByMinute.keys()) this.checkMinute(m);
    const minutes = [...firesByMinute.keys()].filter((m) => !this.expired(m));
    const commands = minutes.map((m) => ['eval', LUA_SCRIPTS.sliceBuckets.lua, 1, this.bucketsKey(m), this.bucketsFor(firesByMinute.get(m) ?? 0, atMost), this.expireAt(m)]);
    const values = await this.run(commands);
    return new Map(minutes.map((m, i) => [m, this.remember(m, values[i])]));
  }

  /** Bucket count of the minute: recorded with SET NX (defaultBuckets) on first use, then read. */
  async buckets(minute: number): Promise<number> {
    this.checkMinute(minute);
    const known = this.knownBuckets.get(minute);
    if (known !== undefined) return known;
    // Past its retention a minute has no index to agree on (SET PXAT in the past stores nothing);
    // its fires are read from MySQL, partitioned by the default count.
    if (this.expired(minute)) return this.defaultBuckets;
    const value = await this.redis.eval(LUA_SCRIPTS.sliceBuckets.lua, 1, this.bucketsKey(minute), this.defaultBuckets, this.expireAt(minute));
    return this.remember(minute, value);
  }

  /** Bucket count recorded for the minute, or null when nothing was ever indexed in it (read-only). */
  async recordedBuckets(minute: number): Promise<number | null> {
    this.checkMinute(minute);
    const known = this.knownBuckets.get(minute);
    if (known !== undefined) return known;
    const value = await this.redis.get(this.bucketsKey(minute));
    return value === null ? null : this.remember(minute, value);
  }

  /**
   * Indexes fires (ZADD, idempotent) and sets each touched key's expiry; pipelined. Fires of minutes
   * already past their retention are left out: their keys would expire at once, and the trigger
   * finds such fires in MySQL.
   */
  async add(fires: FireRef[]): Promise<void> {
    const bySlice = await this.groupBySlice(fires.filter((f) => !this.expired(minuteOf(f.runAt))), true);
    const commands: (string | number)[][] = [];
    for (const [key, { minute, members }] of bySlice) {
      for (let i = 0; i < members.length; i += CHUNK) {
        const args: (string | number)[] = [];
        for (const f of members.slice(i, i + CHUNK)) args.push(f.runAt, member(f));
        commands.push(['zadd', key, ...args]);
      }
      commands.push(['pexpireat', key, this.expireAt(minute)]);
    }
    await this.run(commands);
  }

  /** Removes fires from the index; pipelined. Minutes never indexed are skipped. */
  async remove(fires: FireRef[]): Promise<void> {
    const bySlice = await this.groupBySlice(fires, false);
    const commands: (string | number)[][] = [];
    for (const [key, { members }] of bySlice) {
      for (let i = 0; i < members.length; i += CHUNK) commands.push(['zrem', key, ...members.slice(i, i + CHUNK).map(member)]);
    }
    await this.run(commands);
  }

  /** Removes every fire of the timer scheduled in [fromMs, toMs) (e.g. on delete). Returns how many. */
  async removeTimer(timerId: string, fromMs: number, toMs: number): Promise<number> {
    if (!(fromMs < toMs)) return 0;
    const minutes: number[] = [];
    for (let m = minuteOf(fromMs); m < toMs; m += MINUTE_MS) minutes.push(m);
    const counts = await Promise.all(minutes.map((m) => this.recordedBuckets(m)));
    const commands: (string | number)[][] = [];
    minutes.forEach((m, i) => {
      const buckets = counts[i];
      if (buckets === null) return;
      const key = this.sliceKey(m, this.bucketOf(timerId, buckets));
      commands.push(['eval', LUA_SCRIPTS.removeTimer.lua, 1, key, Math.max(fromMs, m), Math.min(toMs, m + MINUTE_MS), fireIdPrefix(timerId)]);
    });
    const results = await this.run(commands);
    return results.reduce<number>((n, r) => n + Number(r), 0);
  }

  /** Fires of one slice with fromMs <= runAt < toMs, ascending by runAt. */
  async due(minute: number, bucket: number, fromMs: number, toMs: number): Promise<FireRef[]> {
    this.checkMinute(minute);
    if (!(fromMs < toMs)) return [];
    const members = await this.redis.zrangebyscore(this.sliceKey(minute, bucket), fromMs, `(${toMs}`);
    return members.map(parseMember);
  }

  private async groupBySlice(fires: FireRef[], record: boolean): Promise<Map<string, { minute: number; members: FireRef[] }>> {
    const minutes = [...new Set(fires.map((f) => minuteOf(checkFire(f).runAt)))];
    const counts = await Promise.all(minutes.map((m) => (record ? this.buckets(m) : this.recordedBuckets(m))));
    const bucketsOf = new Map(minutes.map((m, i) => [m, counts[i]]));
    const out = new Map<string, { minute: number; members: FireRef[] }>();
    for (const f of fires) {
      const minute = minuteOf(f.runAt);
      const buckets = bucketsOf.get(minute);
      if (buckets === null || buckets === undefined) continue;
      const key = this.sliceKey(minute, this.bucketOf(f.timerId, buckets));
      let slice = out.get(key);
      if (!slice) out.set(key, (slice = { minute, members: [] }));
      slice.members.push(f);
    }
    return out;
  }

  /** Runs commands in pipelines of CHUNK; throws the first command error. */
  private async run(commands: (string | number)[][]): Promise<unknown[]> {
    const out: unknown[] = [];
    for (let i = 0; i < commands.length; i += CHUNK) {
      const results = (await this.redis.pipeline(commands.slice(i, i + CHUNK)).exec()) ?? [];
      for (const [err, value] of results) {
        if (err) throw err;
        out.push(value);
      }
    }
    return out;
  }

  private remember(minute: number, value: unknown): number {
    const n = Number(value);
    if (!Number.isSafeInteger(n) || n < 1) throw new Error(`corrupt bucket count ${String(value)} at ${this.bucketsKey(minute)}`);
    if (this.knownBuckets.size >= 10_000) this.knownBuckets.clear();
    this.knownBuckets.set(minute, n);
    return n;
  }

  private expireAt(minute: number): number {
    return minute + MINUTE_MS + this.retentionMs;
  }

  private expired(minute: number): boolean {
    return this.expireAt(minute) <= Date.now();
  }

  private checkMinute(minute: number): void {
    if (!isMinuteStart(minute)) throw new RangeError(`minute must be the epoch ms of a minute start, got ${minute}`);
  }
}

function member(f: FireRef): string {
  return fireId(f.timerId, f.runAt);
}

function checkFire(f: FireRef): FireRef {
  if (!isTimerId(f.timerId) || !Number.isSafeInteger(f.runAt) || f.runAt < 0) throw new RangeError(`invalid fire ${JSON.stringify(f)}`);
  return f;
}

function parseMember(m: string): FireRef {
  const ref = parseFireId(m);
  if (!ref) throw new Error(`corrupt slice index member ${JSON.stringify(m)}`);
  return ref;
}
