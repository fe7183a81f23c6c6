import { readFileSync } from 'fs';
import { ErrorCodes, RECORD_STATUS_NAMES, RecordStatus, TimerApiError, TimerClient, TimerStatus } from '@timer/client';
import type { CalendarExclude, CreateTimerRequest, FailureWebhook, PatchTimerRequest, PreviewQuery, PutCalendarRequest, RecordsQuery, TimerDefinition } from '@timer/client';
import { formatApps, formatCalendar, formatCalendars, formatDeadLetters, formatOverview, formatPreview, formatRecords, formatTimer, formatTimerList, formatTokens, instant, TIMER_STATUS_NAMES } from './output.format';
import { ExitCode, headerFlags, intFlag, Invocation, UsageError } from './parse-args';

/** What a command printed: `data` for `--output json`, `text` for the table. */
export interface CommandResult {
  data: unknown;
  text: string;
}

/** A command the service cannot do yet: exit 4 with the reason. */
export class NotAvailableError extends Error {
  readonly exitCode = ExitCode.NOT_AVAILABLE;
}

/** A stale `version` on edit, told as what happened and what to do. */
export class EditConflictError extends Error {
  constructor(
    readonly refusal: TimerApiError,
    id: string,
    tried: number,
  ) {
    const cause = refusal;
    super(
      `conflict: timer ${id} was changed by someone else (you edited version ${tried}, it is now at version ${cause.currentVersion}); ` +
        `look at it again (timerctl timers get ${id}) and retry, or give --version ${cause.currentVersion} to overwrite`,
    );
  }
}

// Fields of a GET answer that a definition file may carry (it is the easiest way to write one) but the
// api's create and PUT do not take.
const VIEW_ONLY = ['id', 'app', 'version', 'status', 'createdAt', 'nextFireTimes', 'maintenance', 'calendar', 'spreadOffsetMs'] as const;

/** `pending`, `2`, ... as the status number, naming the flag otherwise. */
function statusFlag<T extends number>(raw: string | undefined, names: Record<number, string>, flag: string): T | undefined {
  if (raw === undefined) return undefined;
  const hit = Object.entries(names).find(([n, name]) => raw === n || raw.toLowerCase() === name);
  if (!hit) throw new UsageError(`--${flag} must be one of ${Object.entries(names).map(([n, name]) => `${name} (${n})`).join(', ')}, not ${JSON.stringify(raw)}`);
  return Number(hit[0]) as T;
}

/** An instant flag as the api takes it: digits as epoch ms, anything else sent as given (the api names it if bad). */
const instantFlag = (raw: string | undefined): number | string | undefined => (raw === undefined ? undefined : /^\d{1,16}$/.test(raw) ? Number(raw) : raw);

/** An instant flag as epoch ms (the overview takes no other form): digits, or ISO 8601 read here; else a usage error naming the flag. */
function epochFlag(raw: string | undefined, flag: string): number | undefined {
  if (raw === undefined) return undefined;
  const ms = /^\d{1,16}$/.test(raw) ? Number(raw) : /^\d{4}-\d\d-\d\dT/.test(raw) ? Date.parse(raw) : NaN;
  if (Number.isNaN(ms)) throw new UsageError(`--${flag} must be epoch ms or ISO 8601 with Z or an offset, not ${JSON.stringify(raw)}`);
  return ms;
}

const defined = <T extends object>(o: T): Partial<T> => Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;

/** The commands of timerctl over the typed client; handlers in run.ts print what these return. */
export class TimerctlService {
  constructor(
    private readonly client: TimerClient,
    private readonly inv: Invocation,
  ) {}

  async execute(): Promise<CommandResult> {
    const { command } = this.inv;
    switch (command) {
      case 'timers list':
        return this.list();
      case 'timers get': {
        const t = await this.client.getTimer(this.ref());
        return { data: t, text: formatTimer(t) };
      }
      case 'timers create':
        return this.create();
      case 'timers edit':
        return this.edit();
      case 'timers enable': {
        const r = await this.client.enableTimer(this.ref());
        return { data: r, text: r.changed ? `enabled timer ${this.id()} (version ${r.version}, ${r.fires} fires prepared until ${instant(r.until)})` : `timer ${this.id()} was already enabled (version ${r.version})` };
      }
      case 'timers disable': {
        const r = await this.client.disableTimer(this.ref());
        return { data: r, text: r.changed ? `disabled timer ${this.id()} (version ${r.version}, ${r.removedFires} pending fires removed)` : `timer ${this.id()} was already disabled (version ${r.version})` };
      }
      case 'timers run': {
        const r = await this.client.runTimer(this.ref());
        return { data: r, text: `fire ${r.fireId} at ${instant(r.runAt)}` };
      }
      case 'timers delete':
        await this.client.deleteTimer(this.ref());
        return { data: { deleted: true, id: Number(this.id()) }, text: `deleted timer ${this.id()}` };
      case 'records':
        return this.records();
      case 'preview':
        return this.preview();
      case 'dlq list':
      case 'dlq replay':
        return this.deadLetters(command);
      case 'apps list': {
        const paging = this.paging();
        const page = await this.client.listApps(paging);
        return { data: page, text: formatApps(page, paging.pageIndex, paging.pageSize) };
      }
      case 'tokens list': {
        const page = await this.client.listAppTokens({ app: this.app(), includeRevoked: this.inv.values.revoked || undefined });
        return { data: page, text: formatTokens(page) };
      }
      case 'overview':
        return this.overview();
      case 'calendars list': {
        const list = await this.client.listCalendars({ app: this.app() });
        return { data: list, text: formatCalendars(list) };
      }
      case 'calendars get': {
        const c = await this.client.getCalendar({ app: this.app(), name: this.calendarName() });
        return { data: c, text: formatCalendar(c) };
      }
      case 'calendars create': {
        const c = await this.client.createCalendar({ app: this.app(), name: this.calendarName(), ...this.calendarDefinition() });
        return { data: c, text: `created calendar ${c.name}\n${formatCalendar(c)}` };
      }
      case 'calendars edit': {
        const c = await this.client.putCalendar({ app: this.app(), name: this.calendarName() }, this.calendarDefinition());
        return { data: c, text: `replaced calendar ${c.name} (${c.regenerated} timer(s) regenerated)\n${formatCalendar(c)}` };
      }
      case 'calendars delete':
        await this.client.deleteCalendar({ app: this.app(), name: this.calendarName() });
        return { data: { deleted: true, name: this.calendarName() }, text: `deleted calendar ${this.calendarName()}` };
      default:
        throw new UsageError(`unknown command ${JSON.stringify(command)}`);
    }
  }

  private app(): string {
    if (!this.inv.app) throw new UsageError('the app is missing: give --app or set TIMER_APP');
    return this.inv.app;
  }

  private id(): string {
    const id = this.inv.args[0];
    if (!/^[1-9]\d{0,19}$/.test(id)) throw new UsageError(`ID must be a positive whole number (a timer id), not ${JSON.stringify(id)}`);
    return id;
  }

  private calendarName(): string {
    const name = this.inv.args[0];
    if (!name) throw new UsageError('NAME is missing: the calendar\'s name');
    return name;
  }

  /** A calendar from --file ({timeZone?, exclude}) with the flags over it: --date (day or FROM..TO), --holiday (DE or DE-BY), --weekdays 6,7, --zone. */
  private calendarDefinition(): PutCalendarRequest {
    const v = this.inv.values;
    const file = v.file === undefined ? {} : (this.file() as { timeZone?: string; exclude?: CalendarExclude });
    const exclude: CalendarExclude = { ...(file.exclude ?? {}) };
    if (v.date?.length) exclude.dates = v.date.map((d) => (d.includes('..') ? { from: d.split('..')[0], to: d.split('..')[1] } : d));
    if (v.holiday?.length) exclude.holidays = v.holiday.map((h) => (h.includes('-') ? { country: h.slice(0, h.indexOf('-')), region: h.slice(h.indexOf('-') + 1) } : { country: h }));
    if (v.weekdays !== undefined) {
      const days = v.weekdays.split(',').map((d) => Number(d.trim()));
      if (days.some((d) => !Number.isInteger(d))) throw new UsageError(`--weekdays must be ISO weekday numbers separated by commas (6,7), not ${JSON.stringify(v.weekdays)}`);
      exclude.weekdays = days;
    }
    if (Object.keys(exclude).length === 0) throw new UsageError('a calendar needs excluded days: --date, --holiday, --weekdays or --file');
    return defined({ timeZone: v.zone ?? file.timeZone, exclude }) as PutCalendarRequest;
  }

  private ref() {
    return { id: this.id(), app: this.app() };
  }

  private paging() {
    const v = this.inv.values;
    return { pageIndex: intFlag(v, 'page') ?? 1, pageSize: intFlag(v, 'page-size') ?? 20 };
  }

  private async list(): Promise<CommandResult> {
    const v = this.inv.values;
    const paging = this.paging();
    const page = await this.client.listTimers({ app: this.app(), ...paging, name: v.name, status: statusFlag<TimerStatus>(v.status, TIMER_STATUS_NAMES, 'status') });
    return { data: page, text: formatTimerList(page, paging.pageIndex, paging.pageSize) };
  }

  private async records(): Promise<CommandResult> {
    const v = this.inv.values;
    const paging = this.paging();
    const q: RecordsQuery = {
      app: this.app(),
      ...paging,
      timerID: v.timer,
      fireID: this.oneFire(),
      status: statusFlag<RecordStatus>(v.status, RECORD_STATUS_NAMES, 'status'),
      from: instantFlag(v.from),
      to: instantFlag(v.to),
      includePending: v.pending || undefined,
    };
    const page = await this.client.listRecords(q);
    return { data: page, text: formatRecords(page, paging.pageIndex, paging.pageSize) };
  }

  /** The timer's schedule through the preview route (DST flags, --count); the GET's next fire times from an api without it. */
  private async preview(): Promise<CommandResult> {
    const t = await this.client.getTimer(this.ref());
    const schedule = defined({ cron: t.cron ?? undefined, runAt: t.runAt ?? undefined, every: t.every ?? undefined, timeZone: t.timeZone, startAt: t.startAt ?? undefined, endAt: t.endAt ?? undefined, dstGap: t.dstGap, dstOverlap: t.dstOverlap });
    try {
      // The timer's calendars as the preview route applies them (excluded and moved fires marked).
      const calendars = t.calendars?.length ? { app: t.app, calendars: t.calendars.join(','), onExcluded: t.onExcluded as PreviewQuery['onExcluded'] } : {};
      const p = await this.client.previewFireTimes({ ...schedule, ...calendars, count: intFlag(this.inv.values, 'count') ?? 10 });
      return { data: { id: t.id, ...p }, text: formatPreview(t, p.fires) };
    } catch (e) {
      if (!(e instanceof TimerApiError && e.code === ErrorCodes.ROUTE_NOT_FOUND)) throw e;
      return { data: { id: t.id, timeZone: t.timeZone, fires: (t.nextFireTimes ?? []).map((at) => ({ at })) }, text: formatPreview(t) };
    }
  }

  /** The api's overview of [from, to) (default the last hour, per minute): the app's, or every app's with --all-apps. */
  private async overview(): Promise<CommandResult> {
    const v = this.inv.values;
    if (v['all-apps'] && v.app !== undefined) throw new UsageError('overview takes --app or --all-apps, not both');
    const o = await this.client.getOverview(defined({ app: v['all-apps'] ? undefined : this.app(), from: epochFlag(v.from, 'from'), to: epochFlag(v.to, 'to'), bucketMs: intFlag(v, 'bucket-ms') }));
    return { data: o, text: formatOverview(o) };
  }

  private oneFire(): string | undefined {
    const fires = this.inv.values.fire;
    if (fires && fires.length > 1) throw new UsageError('records takes one --fire');
    return fires?.[0];
  }

  /** The dead-letter API; an api without it (404 for the route) is exit 4. */
  private async deadLetters(command: 'dlq list' | 'dlq replay'): Promise<CommandResult> {
    const v = this.inv.values;
    const app = this.app();
    try {
      if (command === 'dlq list') {
        const paging = this.paging();
        const page = await this.client.listDeadLetters({ app, ...paging });
        return { data: page, text: formatDeadLetters(page, paging.pageIndex, paging.pageSize) };
      }
      const given = [v.fire?.length ? 'fire' : '', v.timer !== undefined ? 'timer' : '', v.all ? 'all' : ''].filter(Boolean);
      if (given.length !== 1) throw new UsageError(`dlq replay needs exactly one of --fire (repeatable), --timer, --all${given.length ? `, not --${given.join(' and --')}` : ''}`);
      const r = await this.client.replayDeadLetters(v.all ? { app, all: true } : v.timer !== undefined ? { app, timerId: v.timer } : { app, fireIds: v.fire! });
      const notFound = r.notFound.length ? `; not dead letters of ${app}: ${r.notFound.join(', ')}` : '';
      const remaining = r.remaining ? `; ${r.remaining} more left: run it again` : '';
      return { data: r, text: `replayed ${r.replayed} dead letter(s)${r.fireIds.length ? `: ${r.fireIds.join(', ')}` : ''}${notFound}${remaining}` };
    } catch (e) {
      if (e instanceof TimerApiError && e.code === ErrorCodes.ROUTE_NOT_FOUND) throw new NotAvailableError(`${command} is not available: this api has no dead-letter API (${e.message})`);
      throw e;
    }
  }

  /** The definition file (`--file`), without the fields only a GET answer has. */
  private file(): Record<string, unknown> {
    const path = this.inv.values.file;
    if (path === undefined) return {};
    let parsed: unknown;
    try {
      parsed = JSON.parse(readFileSync(path === '-' ? 0 : path, 'utf8'));
    } catch (e) {
      throw new UsageError(`--file ${path}: ${(e as Error).message}`);
    }
    if (!parsed || typeof parsed !== 'object' || Array.isArray(parsed)) throw new UsageError(`--file ${path}: expected a JSON object (a timer definition)`);
    return parsed as Record<string, unknown>;
  }

  /** The definition fields the flags give (nothing for a flag not given). */
  private flagDefinition(): Partial<TimerDefinition> {
    const v = this.inv.values;
    const notify = defined({ url: v.callback, method: v.method as TimerDefinition['notifyHTTPParam']['method'] | undefined, header: headerFlags(v.header), body: v.body, timeoutMs: intFlag(v, 'timeout-ms') });
    const retry = defined({ maxAttempts: intFlag(v, 'max-attempts'), backoffMs: intFlag(v, 'backoff-ms') });
    return defined({
      name: v.name,
      cron: v.cron,
      every: v.every,
      runAt: instantFlag(v['run-at']),
      timeZone: v.zone,
      startAt: instantFlag(v['start-at']),
      endAt: instantFlag(v['end-at']),
      maxFires: intFlag(v, 'max-fires'),
      notifyHTTPParam: Object.keys(notify).length ? (notify as TimerDefinition['notifyHTTPParam']) : undefined,
      retryPolicy: Object.keys(retry).length ? retry : undefined,
      misfirePolicy: v.misfire as TimerDefinition['misfirePolicy'] | undefined,
      failureWebhook: this.webhookFlags('failure'),
      resultWebhook: this.webhookFlags('result'),
      calendars: v.calendar?.filter((c) => c !== ''),
      onExcluded: v['on-excluded'] as TimerDefinition['onExcluded'] | undefined,
    });
  }

  /**
   * `--<kind>-webhook URL` with its `--<kind>-webhook-header`s; `--no-<kind>-webhook` (edit) is null
   * (for a failure webhook, the app's applies again).
   */
  private webhookFlags(kind: 'failure' | 'result'): FailureWebhook | null | undefined {
    const v = this.inv.values;
    const [url, header, none] = [`${kind}-webhook`, `${kind}-webhook-header`, `no-${kind}-webhook`] as const;
    const headers = headerFlags(v[header] as string[] | undefined);
    if (v[none]) {
      if (v[url] !== undefined || headers) throw new UsageError(`--${none} removes the timer's ${kind} webhook: give it without --${url} and --${header}`);
      return null;
    }
    if (v[url] === undefined) {
      if (headers) throw new UsageError(`--${header} needs --${url} URL (the webhook is replaced whole)`);
      return undefined;
    }
    return defined({ url: v[url] as string, headers }) as FailureWebhook;
  }

  /** The file's definition with the flags over it (nested objects merged field by field). */
  private definition(file: Record<string, unknown>): Record<string, unknown> {
    const flags = this.flagDefinition();
    const out: Record<string, unknown> = { ...file, ...flags };
    for (const k of VIEW_ONLY) delete out[k];
    for (const k of ['notifyHTTPParam', 'retryPolicy'] as const) {
      if (flags[k] && file[k] && typeof file[k] === 'object') out[k] = { ...(file[k] as object), ...flags[k] };
    }
    // A schedule flag replaces the file's schedule: the api takes exactly one of them.
    if (flags.cron !== undefined || flags.every !== undefined || flags.runAt !== undefined) {
      for (const k of ['cron', 'every', 'runAt'] as const) if (flags[k] === undefined) delete out[k];
    }
    return out;
  }

  private async create(): Promise<CommandResult> {
    const file = this.file();
    const app = this.inv.app ?? (typeof file.app === 'string' ? file.app : undefined);
    if (!app) throw new UsageError('the app is missing: give --app, set TIMER_APP or put "app" in --file');
    const req = { ...this.definition(file), app } as unknown as CreateTimerRequest;
    const created = await this.client.createTimer(req, { idempotencyKey: this.inv.values['idempotency-key'] });
    const replayed = created.replayed ? ' (replayed: this Idempotency-Key created it before)' : '';
    if (!this.inv.values.enable) return { data: created, text: `created timer ${created.id} (version ${created.version}, disabled: enable it with timerctl timers enable ${created.id})${replayed}` };
    const enabled = await this.client.enableTimer({ id: created.id, app });
    return { data: { ...created, enabled }, text: `created timer ${created.id}${replayed} and enabled it (version ${enabled.version}, ${enabled.fires} fires prepared)` };
  }

  /** PATCH with the flags given, or PUT with --file; the version: --version, else the file's, else the current one. */
  private async edit(): Promise<CommandResult> {
    const ref = this.ref();
    const file = this.file();
    const given = intFlag(this.inv.values, 'version') ?? (typeof file.version === 'number' ? file.version : undefined);
    const version = given ?? (await this.client.getTimer(ref)).version;
    try {
      if (this.inv.values.file !== undefined) {
        const r = await this.client.updateTimer({ ...(this.definition(file) as unknown as TimerDefinition), ...ref, version });
        return { data: r, text: editText(ref.id, r) };
      }
      const patch = this.flagDefinition();
      if (Object.keys(patch).length === 0) throw new UsageError('timers edit: nothing to change (give the flags of the fields to change, or --file)');
      const r = await this.client.patchTimer({ ...(patch as Omit<PatchTimerRequest, 'id' | 'app' | 'version'>), ...ref, version });
      return { data: r, text: editText(ref.id, r) };
    } catch (e) {
      if (e instanceof TimerApiError && e.code === ErrorCodes.STALE_VERSION) throw new EditConflictError(e, ref.id, version);
      throw e;
    }
  }
}

function editText(id: string, r: { version: number; changed: boolean; superseded: number; fires: number }): string {
  if (!r.changed) return `timer ${id} already had this definition (version ${r.version})`;
  return `updated timer ${id} to version ${r.version} (${r.superseded} pending fires superseded, ${r.fires} created)`;
}
