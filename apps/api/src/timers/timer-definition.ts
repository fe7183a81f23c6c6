import { createHash } from 'crypto';
import { FailureWebhook, TimerEntity, TimerFields } from '@timer/dal';
import { CALLBACK_TIMEOUT_MIN_MS } from '@timer/platform';
import { DstGap, DstOverlap, nextFireTimes, nthFireTime, parseInterval, ScheduleError, ScheduleSpec, validateSchedule } from '@timer/schedule';
import { ApiError, badRequest } from '../common/errors';
import { FailureWebhookDto } from '../dlq/dto/dlq.dto';
import { normalizeHeaderMap } from '../common/validators';
import { isPrivateLiteralHost } from './callback-policy';
import { checkCallbackTemplate } from './callback-template';
import { CreateTimerDto } from './dto/create-timer.dto';
import { PatchTimerDto } from './dto/edit-timer.dto';
import { DEFAULT_BACKOFF_MS, DEFAULT_MAX_ATTEMPTS } from './dto/retry-policy.dto';

/** What the checks of a definition depend on besides the definition. */
export interface DefinitionRules {
  now: number;
  allowPrivateCallbacks: boolean;
  callbackBodyMaxBytes: number;
  /** TIMER_CALLBACK_TIMEOUT_MAX_MS: the largest `notifyHTTPParam.timeoutMs`. */
  callbackTimeoutMaxMs: number;
}

/**
 * The definition a create or a PUT gives (the same fields), with the defaults of what it leaves out,
 * except those that depend on the time of the write (`startAt` of an interval, `finalAt`): see
 * {@link resolveSchedule}. What an Idempotency-Key is held to.
 */
export function fieldsOf(dto: CreateTimerDto): TimerFields {
  const n = dto.notifyHTTPParam;
  return {
    name: dto.name,
    cron: dto.cron ?? null,
    runAt: dto.runAt ?? null,
    everyMs: dto.every != null ? asBadRequest(() => parseInterval(dto.every)) : null,
    timeZone: dto.timeZone ?? 'UTC',
    dstGap: dto.dstGap ?? 'shift',
    dstOverlap: dto.dstOverlap ?? 'first',
    startAt: dto.startAt ?? null,
    endAt: dto.endAt ?? null,
    maxFires: dto.maxFires ?? null,
    finalAt: null,
    notifyHttpParam: {
      url: n.url,
      method: n.method,
      ...(n.header ? { header: normalizeHeaderMap(n.header) } : {}),
      ...(typeof n.body === 'string' ? { body: n.body } : {}),
      ...(typeof n.timeoutMs === 'number' ? { timeoutMs: n.timeoutMs } : {}),
      ...(n.template === true ? { template: true } : {}),
    },
    maxAttempts: dto.retryPolicy?.maxAttempts ?? DEFAULT_MAX_ATTEMPTS,
    backoffMs: dto.retryPolicy?.backoffMs ?? DEFAULT_BACKOFF_MS,
    misfirePolicy: dto.misfirePolicy ?? 'fire_late',
    overlapPolicy: dto.overlapPolicy ?? 'allow',
    catchupPolicy: dto.catchupPolicy ?? null,
    catchupWindowMs: dto.catchupWindowMs ?? null,
    jitterMs: dto.jitterMs ?? 0,
    failureWebhook: dto.failureWebhook ? webhookOf(dto.failureWebhook) : null,
    resultWebhook: dto.resultWebhook ? webhookOf(dto.resultWebhook) : null,
    autoSpread: dto.autoSpread ?? false,
    // Admission's choice, not the caller's: see spreadCarried.
    spreadOffsetMs: null,
    calendars: dto.calendars?.length ? dto.calendars : null,
    onExcluded: dto.onExcluded ?? 'skip',
  };
}

/** The definition a stored timer has. */
export function storedFields(t: TimerEntity): TimerFields {
  return {
    name: t.name,
    cron: t.cron ?? null,
    runAt: t.runAt === null || t.runAt === undefined ? null : Number(t.runAt),
    everyMs: t.everyMs ?? null,
    timeZone: t.timeZone,
    dstGap: t.dstGap,
    dstOverlap: t.dstOverlap,
    startAt: t.startAt ?? null,
    endAt: t.endAt ?? null,
    maxFires: t.maxFires ?? null,
    finalAt: t.finalAt ?? null,
    notifyHttpParam: t.notifyHttpParam,
    maxAttempts: t.maxAttempts,
    backoffMs: t.backoffMs,
    misfirePolicy: t.misfirePolicy,
    overlapPolicy: t.overlapPolicy,
    catchupPolicy: t.catchupPolicy ?? null,
    catchupWindowMs: t.catchupWindowMs ?? null,
    jitterMs: t.jitterMs,
    failureWebhook: t.failureWebhook ?? null,
    resultWebhook: t.resultWebhook ?? null,
    autoSpread: Boolean(t.autoSpread),
    spreadOffsetMs: t.spreadOffsetMs ?? null,
    calendars: t.calendars?.length ? t.calendars : null,
    onExcluded: t.onExcluded ?? 'skip',
    calendarRules: t.calendarRules ?? null,
  };
}

/**
 * A PATCH applied to a stored definition: each field given replaces the stored one; giving `cron`,
 * `runAt` or `every` replaces the schedule (the others are cleared; `runAt` clears the bounds too,
 * which a one-shot does not have); `startAt`, `endAt` or `maxFires` set to null removes the bound;
 * `notifyHTTPParam` and `retryPolicy` are patched field by field, and `notifyHTTPParam.header` or
 * `.body` set to null removes them; `catchupPolicy` or `catchupWindowMs` set to null restores its
 * default; `failureWebhook` and `resultWebhook` are replaced whole, null removes them (for the first, the app's applies). Any other null counts as not given, as in create. The stored `startAt` (an interval's
 * anchor) is kept unless given.
 */
export function patchedFields(stored: TimerFields, dto: PatchTimerDto): TimerFields {
  const out: TimerFields = { ...stored, notifyHttpParam: { ...stored.notifyHttpParam } };
  if (dto.name != null) out.name = dto.name;
  if (dto.cron != null || dto.runAt != null || dto.every != null) {
    out.cron = dto.cron ?? null;
    out.runAt = dto.runAt ?? null;
    out.everyMs = dto.every != null ? asBadRequest(() => parseInterval(dto.every)) : null;
    if (out.runAt !== null) Object.assign(out, { startAt: null, endAt: null, maxFires: null });
  }
  for (const bound of ['startAt', 'endAt', 'maxFires'] as const) {
    if (dto[bound] === null) out[bound] = null;
    else if (dto[bound] !== undefined) out[bound] = dto[bound] as number;
  }
  if (dto.timeZone != null) out.timeZone = dto.timeZone;
  // The DST choices are a cron's: a schedule replaced by runAt or every drops them unless given.
  if (out.cron === null) Object.assign(out, { dstGap: 'shift', dstOverlap: 'first' });
  if (dto.dstGap != null) out.dstGap = dto.dstGap;
  if (dto.dstOverlap != null) out.dstOverlap = dto.dstOverlap;
  const n = dto.notifyHTTPParam;
  const p = out.notifyHttpParam;
  if (n) {
    if (n.url != null) p.url = n.url;
    if (n.method != null) p.method = n.method;
    if (n.header === null) delete p.header;
    else if (n.header !== undefined) p.header = normalizeHeaderMap(n.header);
    if (n.body === null) delete p.body;
    else if (n.body !== undefined) p.body = n.body;
    if (n.timeoutMs === null) delete p.timeoutMs;
    else if (n.timeoutMs !== undefined) p.timeoutMs = n.timeoutMs;
    if (n.template === false || n.template === null) delete p.template;
    else if (n.template === true) p.template = true;
  }
  if (dto.retryPolicy) {
    out.maxAttempts = dto.retryPolicy.maxAttempts ?? out.maxAttempts;
    out.backoffMs = dto.retryPolicy.backoffMs ?? out.backoffMs;
  }
  if (dto.misfirePolicy != null) out.misfirePolicy = dto.misfirePolicy;
  if (dto.overlapPolicy != null) out.overlapPolicy = dto.overlapPolicy;
  if (dto.jitterMs != null) out.jitterMs = dto.jitterMs;
  if (dto.autoSpread != null) out.autoSpread = dto.autoSpread;
  if (dto.failureWebhook === null) out.failureWebhook = null;
  else if (dto.failureWebhook !== undefined) out.failureWebhook = webhookOf(dto.failureWebhook);
  if (dto.resultWebhook === null) out.resultWebhook = null;
  else if (dto.resultWebhook !== undefined) out.resultWebhook = webhookOf(dto.resultWebhook);
  // null puts them back to their defaults (misfirePolicy decides; the global window).
  if (dto.catchupPolicy !== undefined) out.catchupPolicy = dto.catchupPolicy ?? null;
  if (dto.catchupWindowMs !== undefined) out.catchupWindowMs = dto.catchupWindowMs ?? null;
  if (dto.calendars !== undefined) out.calendars = dto.calendars?.length ? dto.calendars : null;
  if (dto.onExcluded != null) out.onExcluded = dto.onExcluded;
  return out;
}

/** The schedule spec of a definition: its kind, zone and bounds (`finalAt` once resolved). */
export function scheduleSpecOf(f: TimerFields): ScheduleSpec {
  const spec: ScheduleSpec = { timeZone: f.timeZone };
  if (f.dstGap !== 'shift') spec.dstGap = f.dstGap as DstGap;
  if (f.dstOverlap !== 'first') spec.dstOverlap = f.dstOverlap as DstOverlap;
  if (f.cron !== null) spec.cron = f.cron;
  if (f.runAt !== null) spec.runAt = f.runAt;
  if (f.everyMs !== null) spec.every = f.everyMs;
  if (f.startAt !== null) spec.startAt = f.startAt;
  if (f.endAt !== null) spec.endAt = f.endAt;
  // A one-shot's finalAt is its runAt: not a bound of its own.
  if (f.finalAt !== null && f.runAt === null) spec.finalAt = f.finalAt;
  return spec;
}

/** The fields that decide the fire times (what `finalAt` is derived from). */
const SCHEDULE_INPUTS = ['cron', 'runAt', 'everyMs', 'timeZone', 'dstGap', 'dstOverlap', 'startAt', 'endAt', 'maxFires'] as const;

/**
 * Fills in what a definition's schedule takes from the time of the write `now`: an interval without
 * `startAt` is anchored at `now` rounded up to the whole second (a PUT without startAt re-anchors, a
 * PATCH keeps the stored one); `finalAt` is the one-shot's runAt, or the earlier of `endAt` and the
 * `maxFires`-th fire counted from `startAt` (else from `now`: the write that set the schedule). When the
 * schedule inputs equal `stored`'s, the stored `finalAt` stays (a PUT repeated keeps its count).
 * Throws a 400 naming the field (a schedule that does not evaluate, maxFires beyond its limit).
 */
export function resolveSchedule(f: TimerFields, now: number, stored?: TimerFields): TimerFields {
  const out = { ...f };
  if (out.everyMs !== null && out.startAt === null) out.startAt = Math.ceil(now / 1000) * 1000;
  if (out.runAt !== null && out.maxFires !== null) throw badRequest('maxFires is only for cron and every timers, not for a one-shot runAt');
  if (stored && SCHEDULE_INPUTS.every((k) => stored[k] === out[k])) return { ...out, finalAt: stored.finalAt };
  if (out.runAt !== null) return { ...out, finalAt: out.runAt };
  const spec = scheduleSpecOf({ ...out, finalAt: null });
  const nth = out.maxFires === null ? undefined : asBadRequest(() => nthFireTime(spec, out.startAt ?? now, out.maxFires as number));
  const final = Math.min(out.endAt ?? Infinity, nth ?? Infinity);
  return { ...out, finalAt: Number.isFinite(final) ? final : null };
}

/**
 * The checks of a create beyond the DTO's, on a definition {@link resolveSchedule} filled in: a
 * schedule that evaluates; when `scheduleGiven` (create, PUT, a PATCH of the schedule or its bounds;
 * a PATCH of the URL of a past one-shot or a finished bounded timer is fine) `runAt` in the future and
 * a fire left in [now, finalAt]; a callback host allowed by the private-address rule, a body within
 * the limit. Throws a 400 naming the field.
 */
export function checkDefinition(f: TimerFields, rules: DefinitionRules, scheduleGiven: boolean): void {
  const spec = scheduleSpecOf(f);
  asBadRequest(() => validateSchedule(spec));
  if (scheduleGiven && f.runAt !== null && f.runAt <= rules.now) throw badRequest(`runAt ${new Date(f.runAt).toISOString()} is not in the future`);
  if (f.finalAt !== null && f.runAt === null) {
    if (scheduleGiven && asBadRequest(() => nextFireTimes(spec, rules.now - 1, 1)).length === 0) throw noFireLeft(f, rules.now);
  } else if (f.cron !== null && asBadRequest(() => nextFireTimes({ cron: f.cron as string, timeZone: 'UTC' }, rules.now, 1)).length === 0) {
    // Unbounded: whether a cron ever matches does not depend on the zone (gaps still fire): check on the cheap UTC axis.
    throw badRequest('cron never fires (no matching time in the coming years)');
  }
  const n = f.notifyHttpParam;
  if (!rules.allowPrivateCallbacks && isPrivateLiteralHost(n.url)) {
    throw badRequest('notifyHTTPParam.url points to a loopback or private address; refused unless TIMER_CALLBACK_ALLOW_PRIVATE=true');
  }
  if (n.body !== undefined && Buffer.byteLength(n.body, 'utf8') > rules.callbackBodyMaxBytes) {
    throw badRequest(`notifyHTTPParam.body is larger than ${rules.callbackBodyMaxBytes} bytes`);
  }
  if (n.timeoutMs !== undefined && (n.timeoutMs < CALLBACK_TIMEOUT_MIN_MS || n.timeoutMs > rules.callbackTimeoutMaxMs)) {
    throw badRequest(`notifyHTTPParam.timeoutMs must be from ${CALLBACK_TIMEOUT_MIN_MS} to ${rules.callbackTimeoutMaxMs} ms (TIMER_CALLBACK_TIMEOUT_MAX_MS); got ${n.timeoutMs}`);
  }
  checkCallbackTemplate(n, rules.allowPrivateCallbacks);
  if (f.failureWebhook && !rules.allowPrivateCallbacks && isPrivateLiteralHost(f.failureWebhook.url)) {
    throw badRequest('failureWebhook.url points to a loopback or private address; refused unless TIMER_CALLBACK_ALLOW_PRIVATE=true');
  }
  if (f.resultWebhook && !rules.allowPrivateCallbacks && isPrivateLiteralHost(f.resultWebhook.url)) {
    throw badRequest('resultWebhook.url points to a loopback or private address; refused unless TIMER_CALLBACK_ALLOW_PRIVATE=true');
  }
  if (f.autoSpread && f.jitterMs <= 0) throw badRequest('autoSpread needs jitterMs > 0: the offset is chosen within [0, jitterMs)');
}

/**
 * An edit's definition with the spread offset it keeps: the stored one while autoSpread stays on
 * (admission chooses again when {@link spreadChanged}), none without autoSpread.
 */
export function spreadCarried(stored: TimerFields, f: TimerFields): TimerFields {
  return { ...f, spreadOffsetMs: f.autoSpread ? (stored.autoSpread ? (stored.spreadOffsetMs ?? 0) : 0) : null };
}

/** What admission needs of an autoSpread definition (its jitter); undefined without autoSpread. */
export function spreadOf(f: Pick<TimerFields, 'autoSpread' | 'jitterMs'>): { jitterMs: number } | undefined {
  return f.autoSpread ? { jitterMs: f.jitterMs } : undefined;
}

/** True when where the fires are delivered may move without the schedule changing: autoSpread turned on or off, or its jitter changed. */
export function spreadChanged(a: TimerFields, b: TimerFields): boolean {
  return Boolean(a.autoSpread) !== Boolean(b.autoSpread) || (Boolean(b.autoSpread) && a.jitterMs !== b.jitterMs);
}

/** The stored form of a `failureWebhook` or `resultWebhook` (header names normalised as a callback's). */
function webhookOf(w: FailureWebhookDto): FailureWebhook {
  return { url: w.url, ...(w.headers ? { headers: normalizeHeaderMap(w.headers) } : {}) };
}

/** Whether two definitions are the same (header order and the like aside). */
export function sameFields(a: TimerFields, b: TimerFields): boolean {
  // The calendars' definitions are derived from their names (and follow a calendar's edit).
  return canonicalJson({ ...a, calendarRules: undefined }) === canonicalJson({ ...b, calendarRules: undefined });
}

/** SHA-256 (hex) of a create's normalised request: what an Idempotency-Key is held to. */
export function requestHash(app: string, f: TimerFields): string {
  return createHash('sha256').update(canonicalJson(hashedRequest(app, f))).digest('hex');
}

/** SHA-256 (hex) of a batch create's normalised request (its items as {@link requestHash} takes them, and `enable`). */
export function batchRequestHash(app: string, enable: boolean, fs: readonly TimerFields[]): string {
  return createHash('sha256').update(canonicalJson({ batch: fs.map((f) => hashedRequest(app, f)), enable })).digest('hex');
}

function hashedRequest(app: string, f: TimerFields): Record<string, unknown> {
  // No webhook and no autoSpread hash as before the fields existed: a key's stored hash still matches its retry.
  // The spread offset is admission's choice, not part of the request.
  return {
    app,
    ...f,
    failureWebhook: f.failureWebhook ?? undefined,
    resultWebhook: f.resultWebhook ?? undefined,
    autoSpread: f.autoSpread || undefined,
    spreadOffsetMs: undefined,
    calendars: f.calendars ?? undefined,
    onExcluded: f.onExcluded === 'skip' ? undefined : f.onExcluded,
    calendarRules: undefined,
  };
}

/** The 400 for a bounded definition with no fire at or after now, naming the bound that ends it. */
function noFireLeft(f: TimerFields, now: number): ApiError {
  const iso = (ms: number) => new Date(ms).toISOString();
  if (f.endAt !== null && f.endAt < now) return badRequest(`endAt ${iso(f.endAt)} has passed: the timer would have no fire left`);
  if (f.maxFires !== null && f.finalAt !== null && f.finalAt < now && (f.endAt === null || f.finalAt < f.endAt)) {
    return badRequest(`maxFires: the ${f.maxFires} fires counted from startAt ${iso(f.startAt ?? now)} all lie before now (the last at ${iso(f.finalAt)}): the timer would have no fire left`);
  }
  return badRequest(`endAt: no fire of the schedule lies in [${iso(Math.max(now, f.startAt ?? now))}, ${iso(f.endAt ?? f.finalAt ?? now)}]: the timer would have no fire left`);
}

/** True when the schedule (the fire times) differs, not just the callback or the policies. */
export function scheduleChanged(a: TimerFields, b: TimerFields): boolean {
  return SCHEDULE_INPUTS.some((k) => a[k] !== b[k]) || a.finalAt !== b.finalAt || calendarsChanged(a, b);
}

/** True when the calendars a definition refers to, or what an excluded fire does, differ. */
export function calendarsChanged(a: TimerFields, b: TimerFields): boolean {
  return JSON.stringify(a.calendars ?? []) !== JSON.stringify(b.calendars ?? []) || (a.onExcluded ?? 'skip') !== (b.onExcluded ?? 'skip');
}

/** Runs schedule code, turning its `ScheduleError` into a 400 naming the field. */
export function asBadRequest<T>(fn: () => T): T {
  try {
    return fn();
  } catch (e) {
    if (e instanceof ScheduleError) throw badRequest(`${e.field}: ${e.message}`);
    throw e;
  }
}

/** JSON with object keys sorted at every level, so equal values give equal text. */
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(',')}]`;
  if (v !== null && typeof v === 'object') {
    const entries = Object.entries(v as Record<string, unknown>)
      .filter(([, x]) => x !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${canonicalJson(x)}`).join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}
