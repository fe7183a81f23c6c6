import { TimerApiError, TimerClient, TimerNetworkError } from '@timer/client';
import { ExitCode, Invocation, parseCommandLine, usage, UsageError } from './parse-args';
import { EditConflictError, NotAvailableError, TimerctlService } from './timerctl.service';

export interface Io {
  stdout(text: string): void;
  stderr(text: string): void;
  env: Record<string, string | undefined>;
  /** The client's fetch (tests). */
  fetch?: typeof fetch;
}

interface Failure {
  exit: ExitCode;
  message: string;
  detail: Record<string, unknown>;
}

/** The exit code and message of a failed command (README: 1 refused, 2 usage, 3 unreachable/5xx, 4 not available). */
export function failureOf(e: unknown): Failure {
  if (e instanceof UsageError) return { exit: ExitCode.USAGE, message: `${e.message}\n(timerctl --help for the usage)`, detail: { usage: e.message } };
  if (e instanceof NotAvailableError) return { exit: ExitCode.NOT_AVAILABLE, message: e.message, detail: { notAvailable: e.message } };
  if (e instanceof EditConflictError) {
    const c = e.refusal;
    return { exit: ExitCode.REFUSED, message: e.message, detail: { status: c.status, code: c.code, message: c.message, currentVersion: c.currentVersion, requestId: c.requestId } };
  }
  if (e instanceof TimerApiError) {
    const named = e.field ? ` [field ${e.field}]` : '';
    const id = e.requestId ? ` (code ${e.code}, request ${e.requestId})` : ` (code ${e.code})`;
    return {
      exit: e.status >= 500 ? ExitCode.UNAVAILABLE : ExitCode.REFUSED,
      message: `${e.status}: ${e.message}${named}${id}`,
      detail: { status: e.status, code: e.code, message: e.message, field: e.field, requestId: e.requestId, data: e.extra.data },
    };
  }
  if (e instanceof TimerNetworkError) return { exit: ExitCode.UNAVAILABLE, message: `api unreachable: ${e.message}`, detail: { unreachable: e.message } };
  throw e;
}

/** Runs one command line; resolves to the exit code. Output goes to `io`, nothing to the process. */
export async function run(argv: readonly string[], io: Io): Promise<ExitCode> {
  let inv: Invocation | undefined;
  try {
    inv = parseCommandLine(argv, io.env);
    if (inv.command === 'help') {
      io.stdout(`${usage()}\n`);
      return ExitCode.OK;
    }
    const client = new TimerClient({ baseUrl: inv.url, token: inv.token, fetch: io.fetch, timeoutMs: 30_000 });
    const result = await new TimerctlService(client, inv).execute();
    io.stdout(`${inv.output === 'json' ? JSON.stringify(result.data, null, 2) : result.text}\n`);
    return ExitCode.OK;
  } catch (e) {
    const f = failureOf(e);
    io.stderr(inv?.output === 'json' ? `${JSON.stringify({ error: { exit: f.exit, ...f.detail } })}\n` : `timerctl: ${f.message}\n`);
    return f.exit;
  }
}
