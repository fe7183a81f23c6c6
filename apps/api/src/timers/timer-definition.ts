import { createHash } from 'crypto';
import { TimerEntity, TimerFields } from '@timer/dal';
import { nextFireTimes, ScheduleError, validateSchedule } from '@timer/schedule';
import { badRequest } from '../common/errors';
import { normalizeHeaderMap } from '../common/validators';
import { isPrivateLiteralHost } from './callback-policy';
import { CreateTimerDto } from './dto/create-timer.dto';
import { PatchTimerDto } from './dto/edit-timer.dto';
import { DEFAULT_BACKOFF_MS, DEFAULT_MAX_ATTEMPTS } from './dto/retry-policy.dto';

/** What the checks of a definition depend on besides the definition. */
export interface DefinitionRules {
  now: number;
  allowPrivateCallbacks: boolean;
  callbackBodyMaxBytes: number;
}

/** The definition a create or a PUT gives (the same fields), with the defaults of what it leaves out. */
export function fieldsOf(dto: CreateTimerDto): TimerFields {
  const n = dto.notifyHTTPParam;
  return {
    name: dto.name,
    cron: dto.cron ?? null,
    runAt: dto.runAt ?? null,
    timeZone: dto.timeZone ?? 'UTC',
    notifyHttpParam: {
      url: n.url,
      method: n.method,
      ...(n.header ? { header: normalizeHeaderMap(n.header) } : {}),
      ...(typeof n.body === 'string' ? { body: n.body } : {}),
    },
    maxAttempts: dto.retryPolicy?.maxAttempts ?? DEFAULT_MAX_ATTEMPTS,
    backoffMs: dto.retryPolicy?.backoffMs ?? DEFAULT_BACKOFF_MS,
    misfirePolicy: dto.misfirePolicy ?? 'fire_late',
  };
}

/** The definition a stored timer has. */
export function storedFields(t: TimerEntity): TimerFields {
  return {
    name: t.name,
    cron: t.cron ?? null,
    runAt: t.runAt === null || t.runAt === undefined ? null : Number(t.runAt),
    timeZone: t.timeZone,
    notifyHttpParam: t.notifyHttpParam,
    maxAttempts: t.maxAttempts,
    backoffMs: t.backoffMs,
    misfirePolicy: t.misfirePolicy,
  };
}

/**
 * A PATCH applied to a stored definition: each field given replaces the stored one; giving `cron` or
 * `runAt` replaces the schedule (the other is cleared); `notifyHTTPParam` and `retryPolicy` are
 * patched field by field, and `notifyHTTPParam.header` or `.body` set to null removes them. Any other
 * null counts as not given, as in create.
 */
export function patchedFields(stored: TimerFields, dto: PatchTimerDto): TimerFields {
  const out: TimerFields = { ...stored, notifyHttpParam: { ...stored.notifyHttpParam } };
  if (dto.name != null) out.name = dto.name;
  if (dto.cron != null || dto.runAt != null) {
    out.cron = dto.cron ?? null;
    out.runAt = dto.runAt ?? null;
  }
  if (dto.timeZone != null) out.timeZone = dto.timeZone;
  const n = dto.notifyHTTPParam;
  const p = out.notifyHttpParam;
  if (n) {
    if (n.url != null) p.url = n.url;
    if (n.method != null) p.method = n.method;
    if (n.header === null) delete p.header;
    else if (n.header !== undefined) p.header = normalizeHeaderMap(n.header);
    if (n.body === null) delete p.body;
    else if (n.body !== undefined) p.body = n.body;
  }
  if (dto.retryPolicy) {
    out.maxAttempts = dto.retryPolicy.maxAttempts ?? out.maxAttempts;
    out.backoffMs = dto.retryPolicy.backoffMs ?? out.backoffMs;
  }
  if (dto.misfirePolicy != null) out.misfirePolicy = dto.misfirePolicy;
  return out;
}

/**
 * The checks of a create beyond the DTO's: a schedule that evaluates and fires, `runAt` in the future
 * (when `runAtGiven`: a PATCH that leaves a past one-shot's time alone may still change its URL), a
 * callback host allowed by the private-address rule, a body within the limit. Throws a 400 naming the field.
 */
export function checkDefinition(f: TimerFields, rules: DefinitionRules, runAtGiven: boolean): void {
  const spec = { timeZone: f.timeZone, ...(f.cron !== null ? { cron: f.cron } : {}), ...(f.runAt !== null ? { runAt: f.runAt } : {}) };
  asBadRequest(() => validateSchedule(spec));
  if (runAtGiven && f.runAt !== null && f.runAt <= rules.now) throw badRequest(`runAt ${new Date(f.runAt).toISOString()} is not in the future`);
  // Whether a cron ever matches does not depend on the zone (gaps still fire): check on the cheap UTC axis.
  if (f.cron !== null && asBadRequest(() => nextFireTimes({ cron: f.cron as string, timeZone: 'UTC' }, rules.now, 1)).length === 0) {
    throw badRequest('cron never fires (no matching time in the coming years)');
  }
  const n = f.notifyHttpParam;
  if (!rules.allowPrivateCallbacks && isPrivateLiteralHost(n.url)) {
    throw badRequest('notifyHTTPParam.url points to a loopback or private address; refused unless TIMER_CALLBACK_ALLOW_PRIVATE=true');
  }
  if (n.body !== undefined && Buffer.byteLength(n.body, 'utf8') > rules.callbackBodyMaxBytes) {
    throw badRequest(`notifyHTTPParam.body is larger than ${rules.callbackBodyMaxBytes} bytes`);
  }
}

/** Whether two definitions are the same (header order and the like aside). */
export function sameFields(a: TimerFields, b: TimerFields): boolean {
  return canonicalJson(a) === canonicalJson(b);
}

/** SHA-256 (hex) of a create's normalised request: what an Idempotency-Key is held to. */
export function requestHash(app: string, f: TimerFields): string {
  return createHash('sha256').update(canonicalJson({ app, ...f })).digest('hex');
}

/** True when the schedule (the fire times) differs, not just the callback or the policies. */
export function scheduleChanged(a: TimerFields, b: TimerFields): boolean {
  return a.cron !== b.cron || a.runAt !== b.runAt || a.timeZone !== b.timeZone;
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
