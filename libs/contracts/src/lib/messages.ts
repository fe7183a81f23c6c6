import { FireRef, fireId, isTimerId } from './fire-ref';
import { MESSAGE_PROPERTIES } from './properties';
import { isMinuteStart } from './time';
import { TOPICS } from './topics';

/** Most buckets a minute may be split into. */
export const MAX_BUCKETS = 10_000;
/** Highest delivery attempt a task message may carry. */
export const MAX_ATTEMPT = 1_000;

/** A 2-D time slice: one minute (epoch ms of its first instant, UTC) and one hash bucket of it. */
export interface SliceMessage {
  minute: number;
  bucket: number;
  /** Bucket count recorded for this minute, so every role partitions it the same way. */
  buckets: number;
  /**
   * Token of the slice lock the scheduler took for this offer. The trigger extends the lock with
   * it; once a newer offer holds the lock, an older message's holder stops (fencing).
   */
  lockToken: string;
}

/** One fire of a timer. Its identity is (timerId, runAt); `fireId` is `<timerId>-<runAt>`. */
export interface TaskMessage extends FireRef {
  fireId: string;
  /** 1-based delivery attempt of the callback. */
  attempt: number;
  /**
   * A fire of a backfill (`POST /api/timer/v1/backfill`): delivered however late (no catch-up or misfire
   * check, no pause) and called with `X-Timer-Backfill: 1`. In the payload rather than a property, so
   * retries, rechecks and replays, which re-send the payload, keep it.
   */
  backfill?: true;
  /**
   * The fire's W3C trace context (`00-<trace id>-<span id>-<flags>`), set when the role that published it
   * traces: the executor's spans and the callback's `traceparent` continue that trace. In the payload,
   * like `backfill`, so every attempt of the fire is one trace.
   */
  traceparent?: string;
}

/** A W3C `traceparent` of version 00 (https://www.w3.org/TR/trace-context/#traceparent-header). */
export const TRACEPARENT_PATTERN = /^00-(?!0{32})[0-9a-f]{32}-(?!0{16})[0-9a-f]{16}-[0-9a-f]{2}$/;

/** Most fires one task message may carry. */
export const MAX_TASKS_PER_MESSAGE = 1_000;

/**
 * Many fires in one task message (the trigger's step of a slice): the broker, the WebSocket proxy and
 * both clients pay per message, so one message per step and bucket costs a fraction of one per fire.
 * Each fire keeps its own claim, outcome, retry and dead letter; the message is acknowledged once every
 * fire's outcome is durable, so a crashed executor's batch comes back whole (its settled fires are then
 * dropped as duplicates by the claim fence).
 */
export interface TaskBatchMessage {
  /** Fire ids are derived on parse, so they are not sent. */
  tasks: Omit<TaskMessage, 'fireId'>[];
}

/** A range of timer ids for one migrator window, when a window is split across replicas. */
export interface MigrateRangeMessage {
  /** The window, epoch ms [windowStart, windowEnd). */
  windowStart: number;
  windowEnd: number;
  /** Exclusive lower bound of the timer ids; '0' for the first range. */
  fromTimerId: string;
  /** Inclusive upper bound of the timer ids; '' for the last range (no bound). */
  toTimerId: string;
}

/** The payload each topic carries. */
export interface TopicPayloads {
  [TOPICS.slices]: SliceMessage;
  [TOPICS.tasks]: TaskMessage | TaskBatchMessage;
  [TOPICS.catchUp]: TaskMessage | TaskBatchMessage;
  [TOPICS.retries]: TaskMessage;
  [TOPICS.deadLetter]: TaskMessage;
  [TOPICS.missedFires]: TaskMessage;
  [TOPICS.migrateRanges]: MigrateRangeMessage;
}

/**
 * What every parser returns: the typed message, or why the payload is not one. A rejected payload
 * can never succeed, so consumers log it and do not redeliver it.
 */
export type Parsed<T> = { ok: true; value: T } | { ok: false; reason: string };

const accept = <T>(value: T): Parsed<T> => ({ ok: true, value });
const reject = <T>(reason: string): Parsed<T> => ({ ok: false, reason });

function fields(raw: unknown): Record<string, unknown> | null {
  return typeof raw === 'object' && raw !== null && !Array.isArray(raw) ? (raw as Record<string, unknown>) : null;
}

const isInt = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v);
const isEpochMs = (v: unknown): v is number => isInt(v) && v >= 0;

export function parseSliceMessage(raw: unknown): Parsed<SliceMessage> {
  const m = fields(raw);
  if (!m) return reject('not an object');
  const { minute, bucket, buckets, lockToken } = m;
  if (!isEpochMs(minute) || !isMinuteStart(minute)) return reject(`bad minute ${String(minute)}`);
  if (!isInt(buckets) || buckets < 1 || buckets > MAX_BUCKETS) return reject(`bad buckets ${String(buckets)}`);
  if (!isInt(bucket) || bucket < 0 || bucket >= buckets) return reject(`bad bucket ${String(bucket)}`);
  if (typeof lockToken !== 'string' || lockToken.length === 0 || lockToken.length > 256) return reject('bad lockToken');
  return accept({ minute, bucket, buckets, lockToken });
}

/** The fire id is derived from (timerId, runAt), never taken from the payload. */
export function parseTaskMessage(raw: unknown): Parsed<TaskMessage> {
  const m = fields(raw);
  if (!m) return reject('not an object');
  const { timerId, runAt, attempt, backfill, traceparent } = m;
  if (!isTimerId(timerId)) return reject(`bad timerId ${JSON.stringify(timerId)}`);
  if (!isInt(runAt)) return reject(`bad runAt ${String(runAt)}`);
  if (!isInt(attempt) || attempt < 1 || attempt > MAX_ATTEMPT) return reject(`bad attempt ${String(attempt)}`);
  if (backfill !== undefined && backfill !== true) return reject(`bad backfill ${JSON.stringify(backfill)}`);
  const task: TaskMessage = { timerId, runAt, attempt, fireId: fireId(timerId, runAt) };
  if (backfill) task.backfill = backfill;
  // A malformed trace context only loses the trace (the executor starts none), never the fire.
  if (typeof traceparent === 'string' && TRACEPARENT_PATTERN.test(traceparent)) task.traceparent = traceparent;
  return accept(task);
}

/**
 * A task message of either shape (one fire, or `{tasks: [...]}`) as its fires. A batch with one bad fire
 * is rejected whole: its producer is broken, and half a batch would hide that.
 */
export function parseTaskPayload(raw: unknown): Parsed<TaskMessage[]> {
  const m = fields(raw);
  if (!m) return reject('not an object');
  if (!('tasks' in m)) {
    const one = parseTaskMessage(m);
    return one.ok ? accept([one.value]) : one;
  }
  const { tasks } = m;
  if (!Array.isArray(tasks) || tasks.length === 0 || tasks.length > MAX_TASKS_PER_MESSAGE) {
    return reject(`bad tasks: an array of 1..${MAX_TASKS_PER_MESSAGE} fires expected`);
  }
  const out: TaskMessage[] = new Array(tasks.length);
  for (let i = 0; i < tasks.length; i++) {
    const one = parseTaskMessage(tasks[i]);
    if (!one.ok) return reject(`tasks[${i}]: ${one.reason}`);
    out[i] = one.value;
  }
  return accept(out);
}

/** The wire form of a batch. */
export function taskBatchOf(tasks: readonly TaskMessage[]): TaskBatchMessage {
  return {
    tasks: tasks.map((t) => ({ timerId: t.timerId, runAt: t.runAt, attempt: t.attempt, ...(t.backfill ? { backfill: true as const } : {}), ...(t.traceparent ? { traceparent: t.traceparent } : {}) })),
  };
}

/** The properties a batch's message carries (read by logs and tools without parsing it): its first and last fire id and its count. */
export function taskBatchPropertiesOf(tasks: readonly TaskMessage[]): Record<string, string> {
  return {
    [MESSAGE_PROPERTIES.firstFireId]: tasks[0].fireId,
    [MESSAGE_PROPERTIES.lastFireId]: tasks[tasks.length - 1].fireId,
    [MESSAGE_PROPERTIES.fireCount]: String(tasks.length),
  };
}

export function parseMigrateRangeMessage(raw: unknown): Parsed<MigrateRangeMessage> {
  const m = fields(raw);
  if (!m) return reject('not an object');
  const { windowStart, windowEnd, fromTimerId, toTimerId } = m;
  if (!isEpochMs(windowStart) || !isEpochMs(windowEnd) || windowEnd <= windowStart) return reject(`bad window [${String(windowStart)}, ${String(windowEnd)})`);
  if (!isTimerId(fromTimerId)) return reject(`bad fromTimerId ${JSON.stringify(fromTimerId)}`);
  if (toTimerId !== '' && !isTimerId(toTimerId)) return reject(`bad toTimerId ${JSON.stringify(toTimerId)}`);
  if (toTimerId !== '' && BigInt(toTimerId) <= BigInt(fromTimerId)) return reject(`empty range (${fromTimerId}, ${toTimerId}]`);
  return accept({ windowStart, windowEnd, fromTimerId, toTimerId });
}
