import type { TimerDefinition, TimerVersion } from '@timer/client';
import type { Extensions } from './timer-values';

/** One line of a definition as the version diff compares it. */
export interface DiffRow {
  field: string;
  before: string;
  after: string;
}

const iso = (ms: number | null) => (ms === null ? '' : new Date(ms).toISOString());

/** A definition (a version) as labelled lines, the form the diff compares; empty values are ''. */
export function definitionLines(v: TimerVersion): [string, string][] {
  const n = v.notifyHTTPParam;
  const ext = v as TimerVersion & Extensions;
  // Lines of the fields this service's versions carry (calendars, the result webhook), and only those.
  const extLines: [string, string][] = [];
  if ('calendars' in ext) extLines.push(['Calendars', (ext.calendars ?? []).join(', ')]);
  if ('onExcluded' in ext) extLines.push(['On an excluded day', ext.onExcluded ?? '']);
  if ('resultWebhook' in ext) extLines.push(['Result webhook', ext.resultWebhook?.url ?? '']);

  const headers = Object.entries(n.header ?? {})
    .flatMap(([name, values]) => values.map((x) => `${name}: ${x}`))
    .join('\n');
  return [
    ['Name', v.name],
    ['Schedule', v.cron ? `cron ${v.cron}` : v.every ? `every ${v.every}` : `once at ${iso(v.runAt)}`],
    ['Time zone', v.timeZone],
    ['DST gap', v.cron ? v.dstGap : ''],
    ['DST overlap', v.cron ? v.dstOverlap : ''],
    ['Starts', iso(v.startAt)],
    ['Ends', iso(v.endAt)],
    ['Max fires', v.maxFires === null ? '' : String(v.maxFires)],
    ['Method', n.method],
    ['URL', n.url],
    ['Headers', headers],
    ['Body', n.body ?? ''],
    ['Timeout (ms)', n.timeoutMs === undefined ? '' : String(n.timeoutMs)],
    ['Template', n.template ? 'yes' : ''],
    ['Max attempts', String(v.retryPolicy.maxAttempts)],
    ['Backoff (ms)', String(v.retryPolicy.backoffMs)],
    ['Misfire policy', v.misfirePolicy],
    ['Overlap policy', v.overlapPolicy],
    ['Catch-up policy', v.catchupPolicy ?? ''],
    ['Catch-up window (ms)', v.catchupWindowMs === null ? '' : String(v.catchupWindowMs)],
    ['Jitter (ms)', String(v.jitterMs)],
    ['Auto spread', v.autoSpread ? 'yes' : 'no'],
    ['Failure webhook', v.failureWebhook?.url ?? ''],
    ...extLines,
    ['Status', ({ 1: 'disabled', 2: 'enabled', 3: 'completed' } as const)[v.status]],
  ];
}

/** The lines that differ between two versions, in the order of the definition. */
export function diffVersions(before: TimerVersion, after: TimerVersion): DiffRow[] {
  const a = definitionLines(before);
  const b = new Map(definitionLines(after));
  return a.filter(([field, value]) => b.get(field) !== value).map(([field, value]) => ({ field, before: value, after: b.get(field) ?? '' }));
}

/**
 * A version's definition as a PUT takes it (every field; those the version left empty are left out,
 * so they take their defaults): restoring it writes a new version with that definition. The status is
 * not part of a definition: a restore neither enables nor disables.
 */
export function definitionOf(v: TimerVersion): TimerDefinition {
  const n = v.notifyHTTPParam;
  const some = <T>(x: T | null | undefined) => (x === null || x === undefined ? undefined : x);
  const def: TimerDefinition = {
    name: v.name,
    ...(v.cron ? { cron: v.cron, dstGap: v.dstGap, dstOverlap: v.dstOverlap } : v.every ? { every: v.every } : { runAt: v.runAt ?? undefined }),
    timeZone: v.timeZone,
    startAt: some(v.startAt),
    endAt: some(v.endAt),
    maxFires: some(v.maxFires),
    notifyHTTPParam: { url: n.url, method: n.method, header: n.header, body: n.body, timeoutMs: n.timeoutMs, template: n.template },
    retryPolicy: { maxAttempts: v.retryPolicy.maxAttempts, backoffMs: v.retryPolicy.backoffMs },
    misfirePolicy: v.misfirePolicy,
    overlapPolicy: v.overlapPolicy,
    catchupPolicy: some(v.catchupPolicy),
    catchupWindowMs: some(v.catchupWindowMs),
    jitterMs: v.jitterMs,
    autoSpread: v.autoSpread,
    failureWebhook: some(v.failureWebhook),
  };
  // A PUT replaces the whole definition: these would be dropped if left out.
  const ext = v as TimerVersion & Extensions;
  const kept: Extensions = {
    ...(ext.calendars && ext.calendars.length > 0 ? { calendars: ext.calendars } : {}),
    ...(ext.onExcluded && ext.onExcluded !== 'skip' ? { onExcluded: ext.onExcluded } : {}),
    ...(ext.resultWebhook ? { resultWebhook: ext.resultWebhook } : {}),
  };
  Object.assign(def, kept);
  // JSON leaves undefined out; dropping them here keeps the request body as small as it reads.
  return JSON.parse(JSON.stringify(def)) as TimerDefinition;
}
