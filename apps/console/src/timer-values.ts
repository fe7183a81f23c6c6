/** The definition form's values and what create and edit send from them (no React: unit-tested). */
import type { CallbackMethod, CatchupPolicy, DstGap, DstOverlap, MisfirePolicy, OverlapPolicy } from '@timer/client';
import type { Timer, TimerChange, TimerInput } from './api';

/** What a fire on a day a calendar excludes does (the API's `onExcluded`). */
type OnExcluded = NonNullable<TimerInput['onExcluded']>;
import { localInputToIso, userZone } from './time';

export type ScheduleKind = 'cron' | 'every' | 'runAt';

/** The form's values: strings as the inputs hold them (a number field left empty is "not given"). */
export interface TimerFormValues {
  name: string;
  kind: ScheduleKind;
  cron: string;
  every: string;
  /** `datetime-local` (the user's wall clock), as are startAt and endAt. */
  runAt: string;
  timeZone: string;
  dstGap: string;
  dstOverlap: string;
  startAt: string;
  endAt: string;
  maxFires: string;
  url: string;
  method: string;
  /** One `Name: value` a line; a name on several lines sends each value. */
  headers: string;
  body: string;
  timeoutMs: string;
  maxAttempts: string;
  backoffMs: string;
  misfirePolicy: string;
  overlapPolicy: string;
  /** '' = decided by the misfire policy. */
  catchupPolicy: string;
  catchupWindowMs: string;
  jitterMs: string;
  autoSpread: boolean;
  failureWebhookUrl: string;
  /** The app's calendar names, separated by commas or spaces. */
  calendars: string;
  onExcluded: string;
  resultWebhookUrl: string;
}

/** Definition fields of the calendars and the kept answers: read where the API has them, sent only when set. */
export interface Extensions {
  calendars?: string[];
  onExcluded?: OnExcluded;
  resultWebhook?: { url: string; headers?: Record<string, string | string[]> | null } | null;
}

/** Calendar names as typed: commas or spaces between them. */
export const calendarNames = (text: string): string[] => text.split(/[\s,]+/).filter(Boolean);

/** The API's defaults: a create sends a policy only where the form differs from them. */
const DEFAULTS = { maxAttempts: '3', backoffMs: '1000', misfirePolicy: 'fire_late', overlapPolicy: 'allow', catchupPolicy: '', catchupWindowMs: '', jitterMs: '0', dstGap: 'shift', dstOverlap: 'first' };

export function emptyValues(): TimerFormValues {
  return {
    name: '',
    kind: 'cron',
    cron: '0 * * * * *',
    every: '1m',
    runAt: '',
    timeZone: userZone(),
    startAt: '',
    endAt: '',
    maxFires: '',
    url: '',
    method: 'POST',
    headers: '',
    body: '',
    timeoutMs: '',
    autoSpread: false,
    failureWebhookUrl: '',
    calendars: '',
    onExcluded: 'skip',
    resultWebhookUrl: '',
    ...DEFAULTS,
  };
}

function wallClock(ms: number | null): string {
  if (ms === null) return '';
  const d = new Date(ms);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

/** A header map as the textarea shows it. */
export function headerLines(header: Record<string, string | string[]> | null | undefined): string {
  return Object.entries(header ?? {})
    .flatMap(([name, values]) => (Array.isArray(values) ? values : [values]).map((v) => `${name}: ${v}`))
    .join('\n');
}

/**
 * The textarea's lines as a header map; undefined when empty. A line without a colon is sent as a
 * name with an empty value, so the API's message names what is wrong with it.
 */
export function headerMap(text: string): Record<string, string[]> | undefined {
  const out: Record<string, string[]> = {};
  for (const line of text.split('\n')) {
    if (!line.trim()) continue;
    const at = line.indexOf(':');
    const name = (at < 0 ? line : line.slice(0, at)).trim();
    const value = at < 0 ? '' : line.slice(at + 1).trim();
    (out[name] ??= []).push(value);
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/** A definition (a timer, or one of its versions) as the form's values. */
export function valuesOf(t: Omit<Timer, 'id' | 'app' | 'version' | 'createdAt'>): TimerFormValues {
  const n = t.notifyHTTPParam;
  const ext = t as Extensions;
  return {
    name: t.name,
    kind: t.cron ? 'cron' : t.every ? 'every' : 'runAt',
    cron: t.cron ?? '',
    every: t.every ?? '',
    runAt: wallClock(t.runAt),
    timeZone: t.timeZone,
    dstGap: t.dstGap,
    dstOverlap: t.dstOverlap,
    startAt: t.runAt === null ? wallClock(t.startAt) : '',
    endAt: t.runAt === null ? wallClock(t.endAt) : '',
    maxFires: t.maxFires === null ? '' : String(t.maxFires),
    url: n.url,
    method: n.method,
    headers: headerLines(n.header),
    body: n.body ?? '',
    timeoutMs: n.timeoutMs === undefined || n.timeoutMs === null ? '' : String(n.timeoutMs),
    maxAttempts: String(t.retryPolicy.maxAttempts),
    backoffMs: String(t.retryPolicy.backoffMs),
    misfirePolicy: t.misfirePolicy,
    overlapPolicy: t.overlapPolicy,
    catchupPolicy: t.catchupPolicy ?? '',
    catchupWindowMs: t.catchupWindowMs === null ? '' : String(t.catchupWindowMs),
    jitterMs: String(t.jitterMs),
    autoSpread: t.autoSpread,
    failureWebhookUrl: t.failureWebhook?.url ?? '',
    calendars: (ext.calendars ?? []).join(', '),
    onExcluded: ext.onExcluded ?? 'skip',
    resultWebhookUrl: ext.resultWebhook?.url ?? '',
  };
}

/** A whole number as the API takes it; anything else is sent as typed so the API's message names the field. */
const num = (v: string): number => (/^-?\d+$/.test(v.trim()) ? Number(v.trim()) : (v as unknown as number));
/** An instant from a `datetime-local` value; an unreadable one is sent as typed (the API names it). */
const instant = (v: string): string => localInputToIso(v) ?? v;

function scheduleInput(v: TimerFormValues): Pick<TimerInput, 'cron' | 'every' | 'runAt'> {
  if (v.kind === 'cron') return { cron: v.cron };
  if (v.kind === 'every') return { every: v.every };
  return { runAt: instant(v.runAt) };
}

type Policies = Pick<TimerInput, 'misfirePolicy' | 'overlapPolicy' | 'catchupPolicy' | 'catchupWindowMs' | 'jitterMs' | 'autoSpread' | 'dstGap' | 'dstOverlap'>;

/** The policy fields that differ from `base`; an emptied catch-up field is null (back to its default). */
function policies(v: TimerFormValues, base: Pick<TimerFormValues, keyof typeof DEFAULTS | 'autoSpread'>): Policies {
  const out: Policies = {};
  if (v.misfirePolicy !== base.misfirePolicy) out.misfirePolicy = v.misfirePolicy as MisfirePolicy;
  if (v.overlapPolicy !== base.overlapPolicy) out.overlapPolicy = v.overlapPolicy as OverlapPolicy;
  if (v.catchupPolicy !== base.catchupPolicy) out.catchupPolicy = v.catchupPolicy === '' ? null : (v.catchupPolicy as CatchupPolicy);
  if (v.catchupWindowMs !== base.catchupWindowMs) out.catchupWindowMs = v.catchupWindowMs === '' ? null : num(v.catchupWindowMs);
  if (v.jitterMs !== base.jitterMs) out.jitterMs = num(v.jitterMs || '0');
  if (v.autoSpread !== base.autoSpread) out.autoSpread = v.autoSpread;
  if (v.kind === 'cron' && v.dstGap !== base.dstGap) out.dstGap = v.dstGap as DstGap;
  if (v.kind === 'cron' && v.dstOverlap !== base.dstOverlap) out.dstOverlap = v.dstOverlap as DstOverlap;
  return out;
}

/** Every field of a create, as the API reads them (it validates; the console does not second-guess it). */
export function createInput(v: TimerFormValues): TimerInput {
  const header = headerMap(v.headers);
  const ext: Extensions = {
    ...(calendarNames(v.calendars).length > 0 ? { calendars: calendarNames(v.calendars) } : {}),
    ...(v.onExcluded !== 'skip' ? { onExcluded: v.onExcluded as OnExcluded } : {}),
    ...(v.resultWebhookUrl ? { resultWebhook: { url: v.resultWebhookUrl } } : {}),
  };
  const retry = { ...(v.maxAttempts !== DEFAULTS.maxAttempts ? { maxAttempts: num(v.maxAttempts) } : {}), ...(v.backoffMs !== DEFAULTS.backoffMs ? { backoffMs: num(v.backoffMs) } : {}) };
  return {
    name: v.name,
    ...scheduleInput(v),
    timeZone: v.timeZone || undefined,
    ...(v.kind !== 'runAt' && v.startAt ? { startAt: instant(v.startAt) } : {}),
    ...(v.kind !== 'runAt' && v.endAt ? { endAt: instant(v.endAt) } : {}),
    ...(v.kind !== 'runAt' && v.maxFires ? { maxFires: num(v.maxFires) } : {}),
    notifyHTTPParam: {
      url: v.url,
      method: v.method as CallbackMethod,
      ...(header ? { header } : {}),
      ...(v.body ? { body: v.body } : {}),
      ...(v.timeoutMs ? { timeoutMs: num(v.timeoutMs) } : {}),
    },
    ...(Object.keys(retry).length > 0 ? { retryPolicy: retry } : {}),
    ...policies(v, emptyValues()),
    ...(v.failureWebhookUrl ? { failureWebhook: { url: v.failureWebhookUrl } } : {}),
    ...ext,
  };
}

/**
 * Only what changed, for a PATCH: a schedule given replaces the schedule, a cleared header, body,
 * timeout, bound or failure webhook is removed (null). `stored` keeps the failure webhook's headers.
 */
export function patchInput(before: TimerFormValues, v: TimerFormValues, stored?: Pick<Timer, 'failureWebhook'> & Extensions): TimerChange {
  const out: TimerChange = {};
  if (v.name !== before.name) out.name = v.name;
  if (v.kind !== before.kind || v[v.kind] !== before[v.kind]) Object.assign(out, scheduleInput(v));
  if (v.timeZone !== before.timeZone) out.timeZone = v.timeZone;
  if (v.kind !== 'runAt') {
    if (v.startAt !== before.startAt) out.startAt = v.startAt ? instant(v.startAt) : null;
    if (v.endAt !== before.endAt) out.endAt = v.endAt ? instant(v.endAt) : null;
    if (v.maxFires !== before.maxFires) out.maxFires = v.maxFires ? num(v.maxFires) : null;
  }
  const n: NonNullable<TimerChange['notifyHTTPParam']> = {};
  if (v.url !== before.url) n.url = v.url;
  if (v.method !== before.method) n.method = v.method as CallbackMethod;
  if (v.headers.trim() !== before.headers.trim()) n.header = headerMap(v.headers) ?? null;
  if (v.body !== before.body) n.body = v.body === '' ? null : v.body;
  if (v.timeoutMs !== before.timeoutMs) n.timeoutMs = v.timeoutMs === '' ? null : num(v.timeoutMs);
  if (Object.keys(n).length > 0) out.notifyHTTPParam = n;
  const retry: NonNullable<TimerChange['retryPolicy']> = {};
  if (v.maxAttempts !== before.maxAttempts) retry.maxAttempts = num(v.maxAttempts);
  if (v.backoffMs !== before.backoffMs) retry.backoffMs = num(v.backoffMs);
  if (Object.keys(retry).length > 0) out.retryPolicy = retry;
  Object.assign(out, policies(v, before));
  if (v.failureWebhookUrl !== before.failureWebhookUrl) {
    out.failureWebhook = v.failureWebhookUrl ? { ...(stored?.failureWebhook ?? {}), url: v.failureWebhookUrl } : null;
  }
  const ext: Extensions = {};
  if (calendarNames(v.calendars).join() !== calendarNames(before.calendars).join()) ext.calendars = calendarNames(v.calendars);
  if (v.onExcluded !== before.onExcluded) ext.onExcluded = v.onExcluded as OnExcluded;
  if (v.resultWebhookUrl !== before.resultWebhookUrl) ext.resultWebhook = v.resultWebhookUrl ? { ...(stored?.resultWebhook ?? {}), url: v.resultWebhookUrl } : null;
  Object.assign(out, ext);
  return out;
}

/** The path the API's messages name each value by, where it differs from the value's own name. */
export const VALUE_PATHS: Partial<Record<keyof TimerFormValues, string>> = {
  url: 'notifyHTTPParam.url',
  method: 'notifyHTTPParam.method',
  headers: 'notifyHTTPParam.header',
  body: 'notifyHTTPParam.body',
  timeoutMs: 'notifyHTTPParam.timeoutMs',
  maxAttempts: 'retryPolicy.maxAttempts',
  backoffMs: 'retryPolicy.backoffMs',
  failureWebhookUrl: 'failureWebhook.url',
  resultWebhookUrl: 'resultWebhook.url',
};

/** The label of each field the form shows, by the path the API's messages name it with. */
export const FIELD_LABELS: Readonly<Record<string, string>> = {
  name: 'Name',
  cron: 'Cron',
  every: 'Every',
  runAt: 'At',
  timeZone: 'Time zone',
  dstGap: 'DST gap',
  dstOverlap: 'DST overlap',
  startAt: 'Starts',
  endAt: 'Ends',
  maxFires: 'Max fires',
  'notifyHTTPParam.url': 'URL',
  'notifyHTTPParam.method': 'Method',
  'notifyHTTPParam.header': 'Headers',
  'notifyHTTPParam.body': 'Body',
  'notifyHTTPParam.timeoutMs': 'Timeout (ms)',
  'retryPolicy.maxAttempts': 'Max attempts',
  'retryPolicy.backoffMs': 'Backoff (ms)',
  misfirePolicy: 'Misfire policy',
  overlapPolicy: 'Overlap policy',
  catchupPolicy: 'Catch-up policy',
  catchupWindowMs: 'Catch-up window (ms)',
  jitterMs: 'Jitter (ms)',
  autoSpread: 'Auto spread',
  'failureWebhook.url': 'Failure webhook URL',
  calendars: 'Calendars',
  onExcluded: 'On an excluded day',
  'resultWebhook.url': 'Result webhook URL',
};

