import { RECORD_STATUS_NAMES } from '@timer/client';
import type { AppSummary, AppToken, Attempt, Calendar, DeadLetter, Overview, Page, PreviewFire, TaskRecord, Timer } from '@timer/client';

export const TIMER_STATUS_NAMES: Record<number, string> = { 1: 'disabled', 2: 'enabled', 3: 'completed' };

/** Epoch ms as ISO 8601 UTC, without the milliseconds when they are 0. */
export function instant(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '-';
  return new Date(ms).toISOString().replace('.000Z', 'Z');
}

/** Epoch ms in an IANA zone, with the offset: `2026-03-29 03:00:00 GMT+02:00`. */
export function zoned(ms: number, timeZone: string): { text: string; offset: string } {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat('en-CA', { timeZone, hourCycle: 'h23', year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', second: '2-digit', timeZoneName: 'longOffset' })
      .formatToParts(ms)
      .map((p) => [p.type, p.value]),
  );
  const offset = parts.timeZoneName === 'GMT' ? 'GMT+00:00' : parts.timeZoneName;
  return { text: `${parts.year}-${parts.month}-${parts.day} ${parts.hour}:${parts.minute}:${parts.second} ${offset}`, offset };
}

/** Columns padded to their widest cell; the header in capitals. */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const all = [header.map((h) => h.toUpperCase()), ...rows];
  const widths = header.map((_, i) => Math.max(...all.map((r) => r[i].length)));
  return all.map((r) => r.map((c, i) => c.padEnd(widths[i])).join('  ').trimEnd()).join('\n');
}

export function schedule(t: Pick<Timer, 'cron' | 'every' | 'runAt'>): string {
  if (t.cron !== null) return `cron ${t.cron}`;
  if (t.every !== null) return `every ${t.every}`;
  return `once ${instant(t.runAt)}`;
}

const oneLine = (s: string | null | undefined, max = 60) => {
  if (!s) return '-';
  const flat = s.replace(/\s+/g, ' ');
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
};

export function formatTimerList(page: Page<Timer>, pageIndex: number, pageSize: number): string {
  const rows = page.data.map((t) => [String(t.id), t.name, TIMER_STATUS_NAMES[t.status] ?? String(t.status), schedule(t), t.timeZone, String(t.version), `${t.notifyHTTPParam.method} ${t.notifyHTTPParam.url}`]);
  return `${table(['id', 'name', 'status', 'schedule', 'zone', 'version', 'callback'], rows)}\n${range(page, pageIndex, pageSize)}`;
}

export function formatTimer(t: Timer): string {
  const n = t.notifyHTTPParam;
  const rows: [string, string][] = [
    ['id', String(t.id)],
    ['app', t.app],
    ['name', t.name],
    ['status', TIMER_STATUS_NAMES[t.status] ?? String(t.status)],
    ['version', String(t.version)],
    ['schedule', schedule(t)],
    ['zone', t.timeZone],
    ...(t.startAt !== null ? [['start at', instant(t.startAt)] as [string, string]] : []),
    ...(t.endAt !== null ? [['end at', instant(t.endAt)] as [string, string]] : []),
    ...(t.maxFires !== null ? [['max fires', String(t.maxFires)] as [string, string]] : []),
    ['callback', `${n.method} ${n.url}`],
    ...Object.entries(n.header ?? {}).map(([k, v]) => ['header', `${k}: ${v.join(', ')}`] as [string, string]),
    ...(n.body !== undefined ? [['body', oneLine(n.body, 200)] as [string, string]] : []),
    ...(n.timeoutMs !== undefined ? [['timeout', `${n.timeoutMs} ms`] as [string, string]] : []),
    ['retry', `${t.retryPolicy.maxAttempts} attempts, backoff ${t.retryPolicy.backoffMs} ms`],
    ['misfire', t.misfirePolicy],
    ...(t.failureWebhook ? [['failure webhook', t.failureWebhook.url] as [string, string]] : []),
    ...Object.entries(t.failureWebhook?.headers ?? {}).map(([k, v]) => ['  header', `${k}: ${([] as string[]).concat(v).join(', ')}`] as [string, string]),
    ...(t.resultWebhook ? [['result webhook', t.resultWebhook.url] as [string, string]] : []),
    ...Object.entries(t.resultWebhook?.headers ?? {}).map(([k, v]) => ['  header', `${k}: ${([] as string[]).concat(v).join(', ')}`] as [string, string]),
    ['created', instant(t.createdAt)],
    ...(t.calendars?.length ? [['calendars', `${t.calendars.join(', ')} (on an excluded day: ${t.onExcluded})`] as [string, string]] : []),
    ['next fires', (t.nextFireTimes ?? []).map(instant).join(', ') || '-'],
    ...(t.calendar ?? []).map((m) => ['  calendar', `${instant(m.at)} ${m.excluded ? 'excluded' : `moved from ${instant(m.movedFrom)}`} by ${m.calendar}`] as [string, string]),
  ];
  const width = Math.max(...rows.map(([k]) => k.length));
  return rows.map(([k, v]) => `${k.padEnd(width)}  ${v}`).join('\n');
}

/**
 * The next fire times in the timer's zone and in UTC; a change of the zone's offset is marked, and so
 * are the api's DST flags (a fire shifted out of a gap, the repeat of an overlap, a skipped wall time)
 * when `fires` comes from the preview route. Without it, the GET's `nextFireTimes`.
 */
export function formatPreview(t: Timer, fires?: readonly PreviewFire[]): string {
  const entries = fires ?? (t.nextFireTimes ?? []).map((at) => ({ at }) as PreviewFire);
  if (entries.length === 0) return `timer ${t.id} (${schedule(t)}) has no fire to come`;
  let before: string | undefined;
  const rows = entries.map((f) => {
    const z = zoned(f.at, t.timeZone);
    const notes = [
      ...(f.dst ? [`${f.dst}${f.nominal ? ` (${f.nominal.replace('T', ' ')})` : ''}`] : []),
      ...(before !== undefined && z.offset !== before ? [`offset ${before} -> ${z.offset}`] : []),
      ...(f.excluded ? [`excluded by ${f.calendar}`] : f.movedFrom !== undefined ? [`moved from ${instant(f.movedFrom)} by ${f.calendar}`] : []),
    ];
    before = z.offset;
    return [z.text, instant(f.at), notes.join(', ')];
  });
  return `timer ${t.id} ${t.name}: ${schedule(t)} in ${t.timeZone} (${TIMER_STATUS_NAMES[t.status] ?? t.status})\n${table([t.timeZone, 'utc', ''], rows)}`;
}

const range = (page: Page<unknown>, pageIndex: number, pageSize: number) =>
  page.data.length ? `(${(pageIndex - 1) * pageSize + 1}-${(pageIndex - 1) * pageSize + page.data.length} of ${page.total})` : page.total ? `(page ${pageIndex} is past the last; ${page.total} in all)` : '(none)';

export function formatDeadLetters(page: Page<DeadLetter>, pageIndex: number, pageSize: number): string {
  const rows = page.data.map((d) => [d.fireId, instant(d.runAt), instant(d.failedAt), String(d.attempts), d.reason, d.httpStatus === null ? '-' : String(d.httpStatus), oneLine(d.error)]);
  return `${table(['fire id', 'run at', 'failed at', 'attempts', 'reason', 'http', 'error'], rows)}\n${range(page, pageIndex, pageSize)}`;
}

export function formatApps(page: Page<AppSummary>, pageIndex: number, pageSize: number): string {
  const rows = page.data.map((a) => [a.app, String(a.liveTimers), String(a.liveTokens), a.paused ? 'paused' : '-', instant(a.createdAt)]);
  return `${table(['app', 'timers', 'tokens', 'paused', 'created'], rows)}\n${range(page, pageIndex, pageSize)}`;
}

export function formatTokens(page: Page<AppToken>): string {
  const rows = page.data.map((t) => [String(t.id), t.label ?? '-', instant(t.createdAt), instant(t.revokedAt)]);
  return `${table(['id', 'label', 'issued', 'revoked'], rows)}\n${page.total} token(s)`;
}

export function formatRecords(page: Page<TaskRecord>, pageIndex: number, pageSize: number): string {
  const rows = page.data.map((r) => [
    r.fireId,
    instant(r.runAt),
    RECORD_STATUS_NAMES[r.status] ?? String(r.status),
    String(r.attempt),
    r.httpStatus === null ? '-' : String(r.httpStatus),
    r.latenessMs === null ? '-' : `${r.latenessMs} ms`,
    r.costMs === null ? '-' : `${r.costMs} ms`,
    oneLine(r.error),
    answer(r.attempts[r.attempts.length - 1]?.response),
  ]);
  return `${table(['fire id', 'run at', 'status', 'attempts', 'http', 'lateness', 'took', 'error', 'answer'], rows)}\n${range(page, pageIndex, pageSize)}`;
}

/** The last attempt's kept answer: its content type and the start of its body (`…` when cut here or by the executor). */
function answer(r: Attempt['response'] | undefined): string {
  if (!r) return '-';
  const type = r.headers['content-type'];
  const body = r.body === '' ? '' : oneLine(r.body, 40);
  const text = [type, body].filter((s) => s).join(' ') || '(empty)';
  return r.truncated && !text.endsWith('…') ? `${text}…` : text;
}

const ms = (v: number | null) => (v === null ? '-' : `${v} ms`);

/** The overview: one row per bucket that had fires (UTC), then the totals and the backlog. */
export function formatOverview(o: Overview): string {
  const rows = o.buckets
    .filter((b) => b.fires > 0)
    .map((b) => [instant(b.start), String(b.firesPerSecond), String(b.delivered), String(b.failed), String(b.missed), String(b.open), ms(b.latenessP50Ms), ms(b.latenessP99Ms)]);
  const t = o.totals;
  const head = `${o.app === null ? 'all apps' : `app ${o.app}`}, ${instant(o.from)} to ${instant(o.to)} in buckets of ${o.bucketMs / 1000} s`;
  const body = rows.length ? table(['bucket', 'fires/s', 'delivered', 'failed', 'missed', 'open', 'p50', 'p99'], rows) : '(no fires)';
  const late = `lateness p50 ${ms(t.latenessP50Ms)}, p99 ${ms(t.latenessP99Ms)} over ${t.latenessFires} delivered${t.latenessCapped ? ' (the latest only)' : ''}`;
  const backlog = `backlog: ${o.backlog.pending}${o.backlog.capped ? '+' : ''} pending past their time${o.backlog.oldestRunAt === null ? '' : `, the oldest due ${instant(o.backlog.oldestRunAt)}`}`;
  return `${head}\n${body}\ntotal: ${t.fires} fires (${t.firesPerSecond}/s), ${t.delivered} delivered, ${t.failed} failed, ${t.missed} missed, ${t.open} open; ${late}\n${backlog}`;
}

/** What a calendar excludes, in one line per kind. */
function excludes(c: Calendar): string[] {
  const e = c.exclude;
  return [
    ...(e.dates?.length ? [`dates ${e.dates.map((d) => (typeof d === 'string' ? d : `${d.from}..${d.to}`)).join(', ')}`] : []),
    ...(e.holidays?.length ? [`holidays ${e.holidays.map((h) => (h.region ? `${h.country}-${h.region}` : h.country)).join(', ')}`] : []),
    ...(e.weekdays?.length ? [`weekdays ${e.weekdays.join(',')}`] : []),
  ];
}

export function formatCalendars(list: readonly Calendar[]): string {
  if (list.length === 0) return '(no calendars)';
  return table(['name', 'zone', 'excludes'], list.map((c) => [c.name, c.timeZone ?? "timer's", excludes(c).join('; ')]));
}

export function formatCalendar(c: Calendar): string {
  const rows: [string, string][] = [
    ['name', c.name],
    ['zone', c.timeZone ?? "each timer's"],
    ...excludes(c).map((x) => ['excludes', x] as [string, string]),
    ...(c.timers ? [['timers', c.timers.join(', ') || '-'] as [string, string]] : []),
  ];
  const width = Math.max(...rows.map(([k]) => k.length));
  return rows.map(([k, v]) => `${k.padEnd(width)}  ${v}`).join('\n');
}
