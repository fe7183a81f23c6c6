import type Redis from 'ioredis';
import { LUA_SCRIPTS } from './lua-scripts';
import { RedisKeys } from './redis-keys';

/** Claim sequence numbers per bitmap: 2 bits each plus the opening bit, 16 KiB a chunk. */
export const CALL_MARKS_CHUNK = 65_536;

/** What a taker-over learns about the dead holder's claim. */
export type CallStart = 'called' | 'not_called' | 'unknown';

interface CallMarkCommands {
  timerCallMarkMany(key: string, ttlMs: number, ...indexes: number[]): Promise<number[]>;
  timerCallTakeOver(key: string, ttlMs: number, index: number): Promise<number>;
}

/**
 * Which claims of an executor process have started their callback (docs/architecture.md, "Duplicates on
 * an executor death"). One bitmap per process and chunk of {@link CALL_MARKS_CHUNK} claim sequence
 * numbers ({@link RedisKeys.executorCalls}; bit 0 "open", then per claim i: bit 2i+2 "called", bit
 * 2i+3 "taken over"): the process opens a chunk before it hands out any of its claims, sets a claim's
 * "called" bit before its call goes out, and a taker-over of a dead process's claim sets "taken over"
 * and reads "called" in one script, so a holder still running (a paused process) cannot start the
 * call after the read. A chunk that is missing or was re-created
 * without its opening bit (FLUSHALL, expiry) proves nothing: its claims count as called.
 */
export class CallMarks {
  private readonly keys: RedisKeys;

  constructor(
    private readonly redis: Redis,
    prefix: string,
  ) {
    this.keys = new RedisKeys(prefix);
    redis.defineCommand('timerCallMarkMany', LUA_SCRIPTS.markCalls);
    redis.defineCommand('timerCallTakeOver', LUA_SCRIPTS.takeOverCall);
  }

  private get commands(): CallMarkCommands {
    return this.redis as unknown as CallMarkCommands;
  }

  key(processId: string, chunk: number): string {
    return this.keys.executorCalls(processId, chunk);
  }

  /** Opens a chunk none of whose claims exist yet (so none can have been called unmarked). */
  async open(processId: string, chunk: number, ttlMs: number): Promise<void> {
    const key = this.key(processId, chunk);
    await this.redis.multi().setbit(key, 0, 1).pexpire(key, ttlMs).exec();
  }

  /** Keeps the chunk for `ttlMs` more; false when it is gone (its marks are lost). */
  async keep(processId: string, chunk: number, ttlMs: number): Promise<boolean> {
    return (await this.redis.pexpire(this.key(processId, chunk), ttlMs)) === 1;
  }

  /** The chunk proves nothing any more (a mark of it may have failed): its claims count as called. */
  async close(processId: string, chunk: number): Promise<void> {
    await this.redis.setbit(this.key(processId, chunk), 0, 0);
  }

  /** Sets the "called" bit of each claim index; per index, false when the claim was taken over. */
  async markMany(processId: string, chunk: number, indexes: readonly number[], ttlMs: number): Promise<boolean[]> {
    const reply = await this.commands.timerCallMarkMany(this.key(processId, chunk), ttlMs, ...indexes);
    return indexes.map((_, i) => Number(reply[i]) === 1);
  }

  /** Fences the claim off from its holder and says whether its call had started. */
  async takeOver(processId: string, chunk: number, index: number, ttlMs: number): Promise<CallStart> {
    const reply = Number(await this.commands.timerCallTakeOver(this.key(processId, chunk), ttlMs, index));
    return reply === 0 ? 'not_called' : reply === 1 ? 'called' : 'unknown';
  }
}
