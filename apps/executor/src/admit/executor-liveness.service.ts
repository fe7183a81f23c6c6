import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { randomBytes } from 'crypto';
import type Redis from 'ioredis';
import { hostname } from 'os';
import { REDIS, RedisKeys } from '@timer/redis';

/** How long an executor counts as alive after its last beat. */
export const LIVENESS_TTL_MS = 4_000;
/** How often a live executor beats (a quarter of the TTL: three missed beats before it counts as dead). */
export const LIVENESS_BEAT_MS = 1_000;

/**
 * Whether an executor process is alive: each process keeps `<prefix>executor-alive:<processId>` in
 * Redis with a short TTL while it runs. Claim tokens start with the process id, so another executor
 * that finds a fire held by a dead process takes it over within seconds instead of waiting out the
 * claim lease (TIMER_EXECUTOR_CLAIM_LEASE_MS), while a live but slow executor keeps its claims.
 * Redis failures count as "alive": the fence never weakens because Redis is unreachable.
 */
@Injectable()
export class ExecutorLiveness implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(ExecutorLiveness.name);
  /** Unique per process start: host, pid and a random part. */
  readonly processId = `${hostname().slice(0, 60)}:${process.pid}:${randomBytes(4).toString('hex')}`;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    private readonly keys: RedisKeys,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.beat();
    this.timer = setInterval(() => void this.beat(), LIVENESS_BEAT_MS);
    this.timer.unref();
  }

  /** After the drain (in-flight work finished): this process holds no claim any more. */
  async onApplicationShutdown(): Promise<void> {
    clearInterval(this.timer);
    await this.redis.del(this.key(this.processId)).catch(() => undefined);
  }

  /** A claim token of this process: `<processId>:<seq>`. */
  token(seq: number): string {
    return `${this.processId}:${seq}`;
  }

  /** True only when the process that made `token` is known to be gone (its key expired). */
  async isDead(token: string): Promise<boolean> {
    const cut = token.lastIndexOf(':');
    // Not a token of this format: nothing tells whether its maker lives, so its lease decides.
    if (cut <= 0) return false;
    const processId = token.slice(0, cut);
    if (processId === this.processId) return false;
    try {
      return (await this.redis.exists(this.key(processId))) === 0;
    } catch {
      return false;
    }
  }

  private key(processId: string): string {
    return this.keys.executorAlive(processId);
  }

  private async beat(): Promise<void> {
    try {
      await this.redis.set(this.key(this.processId), '1', 'PX', LIVENESS_TTL_MS);
    } catch (e) {
      this.logger.warn(`liveness beat failed (claims of this process stay fenced by their lease): ${(e as Error).message}`);
    }
  }
}
