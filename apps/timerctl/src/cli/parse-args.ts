import { RECORD_STATUSES } from '@timer/client';
import { parseArgs } from 'util';

/** Exit codes scripts can rely on (apps/timerctl/README.md). */
export const ExitCode = {
  OK: 0,
  /** The api refused the request (4xx): the message names the field. */
  REFUSED: 1,
  /** Bad command line: unknown command or option, missing argument, a flag value that is not a number. */
  USAGE: 2,
  /** The api could not be reached, or failed (5xx). */
  UNAVAILABLE: 3,
  /** The api does not have the route the command needs (an api older than the dead-letter API, for dlq). */
  NOT_AVAILABLE: 4,
} as const;
export type ExitCode = (typeof ExitCode)[keyof typeof ExitCode];

/** A command line timerctl cannot run: exit 2, with the usage hint. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

export const DEFAULT_URL = 'http://127.0.0.1:8092';

/** The definition flags of `timers create` and `timers edit` (each maps to one field of the api). */
const DEFINITION = ['name', 'cron', 'every', 'run-at', 'zone', 'start-at', 'end-at', 'max-fires', 'callback', 'method', 'header', 'body', 'timeout-ms', 'max-attempts', 'backoff-ms', 'misfire', 'failure-webhook', 'failure-webhook-header', 'result-webhook', 'result-webhook-header', 'calendar', 'on-excluded', 'file'];
/** The flags of a calendar's definition (`calendars create` and `calendars edit`). */
const CALENDAR = ['zone', 'date', 'holiday', 'weekdays', 'file'];
const PAGE = ['page', 'page-size'];

interface CommandSpec {
  /** Positional arguments after the command words. */
  args: readonly string[];
  options: readonly string[];
  summary: string;
}

export const COMMANDS: Record<string, CommandSpec> = {
  'timers list': { args: [], options: ['name', 'status', ...PAGE], summary: 'timers of the app, newest first' },
  'timers get': { args: ['ID'], options: [], summary: 'one timer: definition, status, version, next fire times' },
  'timers create': { args: [], options: [...DEFINITION, 'enable', 'idempotency-key'], summary: 'create a timer (disabled unless --enable)' },
  'timers edit': { args: ['ID'], options: [...DEFINITION, 'no-failure-webhook', 'no-result-webhook', 'version'], summary: 'change the flags given (PATCH), or replace the definition with --file (PUT)' },
  'timers enable': { args: ['ID'], options: [], summary: 'start firing' },
  'timers disable': { args: ['ID'], options: [], summary: 'stop firing (pending fires are removed)' },
  'timers run': { args: ['ID'], options: [], summary: 'one fire now' },
  'timers delete': { args: ['ID'], options: [], summary: 'delete (the name becomes reusable)' },
  records: { args: [], options: ['timer', 'fire', 'status', 'from', 'to', 'pending', ...PAGE], summary: 'fire records of the app, a timer (--timer) or a fire (--fire), latest first' },
  preview: { args: ['ID'], options: ['count'], summary: "the timer's next fire times in its zone and in UTC, DST changes marked" },
  'dlq list': { args: [], options: [...PAGE], summary: 'dead letters of the app, latest first' },
  'dlq replay': { args: [], options: ['fire', 'timer', 'all'], summary: 'deliver dead letters once more: --fire ID (repeat), --timer ID or --all' },
  'calendars list': { args: [], options: [], summary: 'calendars of excluded days of the app' },
  'calendars get': { args: ['NAME'], options: [], summary: 'one calendar and the timers that use it' },
  'calendars create': { args: ['NAME'], options: CALENDAR, summary: 'create a calendar: --date, --holiday, --weekdays (or --file)' },
  'calendars edit': { args: ['NAME'], options: CALENDAR, summary: "replace a calendar's days (the timers that use it are regenerated)" },
  'calendars delete': { args: ['NAME'], options: [], summary: 'delete a calendar no timer uses' },
  'apps list': { args: [], options: [...PAGE], summary: 'every app: live timers, live tokens, paused (admin token)' },
  'tokens list': { args: [], options: ['revoked'], summary: "the app's tokens: id, label, issued, revoked (never the token)" },
  overview: { args: [], options: ['from', 'to', 'bucket-ms', 'all-apps'], summary: 'fires per second, outcomes, lateness p50/p99 and backlog, per minute of the last hour' },
};

const OPTIONS = {
  url: { type: 'string' },
  token: { type: 'string' },
  app: { type: 'string' },
  output: { type: 'string', short: 'o' },
  help: { type: 'boolean', short: 'h' },
  name: { type: 'string' },
  cron: { type: 'string' },
  every: { type: 'string' },
  'run-at': { type: 'string' },
  zone: { type: 'string' },
  'start-at': { type: 'string' },
  'end-at': { type: 'string' },
  'max-fires': { type: 'string' },
  callback: { type: 'string' },
  method: { type: 'string' },
  header: { type: 'string', multiple: true },
  body: { type: 'string' },
  'timeout-ms': { type: 'string' },
  'max-attempts': { type: 'string' },
  'backoff-ms': { type: 'string' },
  misfire: { type: 'string' },
  'failure-webhook': { type: 'string' },
  'failure-webhook-header': { type: 'string', multiple: true },
  'no-failure-webhook': { type: 'boolean' },
  calendar: { type: 'string', multiple: true },
  'on-excluded': { type: 'string' },
  date: { type: 'string', multiple: true },
  holiday: { type: 'string', multiple: true },
  weekdays: { type: 'string' },
  'result-webhook': { type: 'string' },
  'result-webhook-header': { type: 'string', multiple: true },
  'no-result-webhook': { type: 'boolean' },
  'bucket-ms': { type: 'string' },
  'all-apps': { type: 'boolean' },
  file: { type: 'string' },
  enable: { type: 'boolean' },
  'idempotency-key': { type: 'string' },
  version: { type: 'string' },
  status: { type: 'string' },
  page: { type: 'string' },
  'page-size': { type: 'string' },
  timer: { type: 'string' },
  fire: { type: 'string', multiple: true },
  all: { type: 'boolean' },
  from: { type: 'string' },
  to: { type: 'string' },
  pending: { type: 'boolean' },
  revoked: { type: 'boolean' },
  count: { type: 'string' },
} as const;

type Values = ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: true }>>['values'];

export type Output = 'table' | 'json';

export interface Invocation {
  /** `timers list`, `records`, ...; `help` for --help or no command. */
  command: string;
  args: string[];
  values: Values;
  url: string;
  token?: string;
  app?: string;
  output: Output;
}

const GLOBAL = ['url', 'token', 'app', 'output', 'help'];

/**
 * The command line as a command, its arguments and flags; `env` gives TIMER_URL, TIMER_TOKEN and
 * TIMER_APP (a flag wins). Throws {@link UsageError}.
 */
export function parseCommandLine(argv: readonly string[], env: Record<string, string | undefined>): Invocation {
  let parsed;
  try {
    parsed = parseArgs({ args: [...argv], options: OPTIONS, allowPositionals: true, strict: true });
  } catch (e) {
    throw new UsageError((e as Error).message.replace(/\. To specify a positional.*$/s, ''));
  }
  const { values, positionals } = parsed;
  const output = values.output ?? 'table';
  if (output !== 'table' && output !== 'json') throw new UsageError(`--output must be table or json, not ${JSON.stringify(output)}`);
  const base = { values, url: values.url ?? env.TIMER_URL ?? DEFAULT_URL, token: values.token ?? env.TIMER_TOKEN, app: values.app ?? env.TIMER_APP, output: output as Output };
  if (values.help || positionals.length === 0) return { ...base, command: 'help', args: [] };

  const two = positionals.slice(0, 2).join(' ');
  const command = COMMANDS[two] ? two : COMMANDS[positionals[0]] ? positionals[0] : undefined;
  if (!command) {
    const group = Object.keys(COMMANDS).filter((c) => c.startsWith(`${positionals[0]} `));
    const choices = group.length > 0 ? `: ${positionals[0]} needs one of ${group.map((c) => c.split(' ')[1]).join(', ')}` : '';
    throw new UsageError(positionals.length === 1 && choices ? choices.slice(2) : `unknown command ${JSON.stringify(positionals.slice(0, 2).join(' '))}${choices}`);
  }
  const spec = COMMANDS[command];
  const args = positionals.slice(command.split(' ').length);
  if (args.length !== spec.args.length) {
    throw new UsageError(args.length < spec.args.length ? `${command} needs ${spec.args.join(' ')}` : `${command} takes ${spec.args.length ? spec.args.join(' ') : 'no argument'}, got ${JSON.stringify(args.join(' '))}`);
  }
  const misplaced = Object.keys(values).filter((k) => !GLOBAL.includes(k) && !spec.options.includes(k));
  if (misplaced.length > 0) throw new UsageError(`${command} does not take --${misplaced.join(', --')}`);
  return { ...base, command, args };
}

/** A whole-number flag (`--page 2`), undefined when absent; anything else is a usage error naming the flag. */
export function intFlag(values: Values, name: keyof Values): number | undefined {
  const raw = values[name];
  if (raw === undefined) return undefined;
  if (typeof raw !== 'string' || !/^-?\d{1,15}$/.test(raw)) throw new UsageError(`--${String(name)} must be a whole number, not ${JSON.stringify(raw)}`);
  return Number(raw);
}

/** `--header "Name: value"` (repeatable) as the api's header map; a name given twice keeps both values. */
export function headerFlags(raw: readonly string[] | undefined): Record<string, string[]> | undefined {
  if (!raw?.length) return undefined;
  const out: Record<string, string[]> = {};
  for (const h of raw) {
    const i = h.indexOf(':');
    if (i <= 0) throw new UsageError(`--header must be "Name: value", not ${JSON.stringify(h)}`);
    const name = h.slice(0, i).trim();
    (out[name] ??= []).push(h.slice(i + 1).trim());
  }
  return out;
}

export function usage(): string {
  const width = Math.max(...Object.entries(COMMANDS).map(([c, s]) => `${c} ${s.args.join(' ')}`.length));
  const lines = Object.entries(COMMANDS).map(([c, s]) => `  ${`${c} ${s.args.join(' ')}`.padEnd(width)}  ${s.summary}`);
  return `usage: timerctl <command> [options]

${lines.join('\n')}

global options (flags win over the environment):
  --url URL          the api (TIMER_URL, default ${DEFAULT_URL})
  --token TOKEN      admin or app token (TIMER_TOKEN)
  --app APP          the app (TIMER_APP)
  -o, --output FMT   table (default) or json
timers create / edit:
  --name N  --cron EXPR | --every 5m | --run-at TIME  --zone IANA  --start-at TIME  --end-at TIME  --max-fires N
  --callback URL  --method POST  --header "Name: value" (repeat)  --body TEXT  --timeout-ms N
  --max-attempts N  --backoff-ms N  --misfire fire_late|skip
  --failure-webhook URL  --failure-webhook-header "Name: value" (repeat)  where this timer's dead letters and missed fires are
                     posted instead of the app's webhook; edit: --no-failure-webhook removes it (the app's applies again)
  --calendar NAME (repeat; edit: --calendar "" removes them)  --on-excluded skip|nextBusinessDay|previousBusinessDay
  --result-webhook URL  --result-webhook-header "Name: value" (repeat)  where each final answer of the callback is posted;
                     edit: --no-result-webhook removes it
  --file def.json    the definition as JSON (the api's fields; the output of "timers get -o json" works); flags win
  create: --enable (enable it at once)  --idempotency-key KEY
  edit: --version N (default: the file's, else the current one fetched first; a stale one is a conflict, exit 1)
records: --timer ID --fire FIRE_ID --status ${RECORD_STATUSES.map((s) => s.name).join('|')} --from TIME --to TIME --pending
preview: --count N (default 10)
calendars create / edit NAME: --date 2026-12-24 | --date 2026-12-24..2026-12-31 (repeat)  --holiday DE | --holiday DE-BY (repeat)
  --weekdays 6,7 (ISO: 1 Monday .. 7 Sunday)  --zone IANA (default: each timer's)  --file cal.json ({timeZone?, exclude}); edit replaces it whole
overview: --from TIME --to TIME (default the last hour) --bucket-ms N (default 60000); --all-apps (admin token: every app, no --app)
lists: --page N (from 1) --page-size N (1-100)
tokens list: --revoked (also the revoked ones)
dlq replay: --fire FIRE_ID (repeat) | --timer ID | --all; at most 500 a request ("remaining" says how many are left)
TIME: epoch ms or ISO 8601 with Z or an offset.
exit codes: 0 ok, 1 refused by the api (4xx), 2 usage error, 3 api unreachable or failing (5xx), 4 the api lacks the route (dlq on an older api)`;
}
