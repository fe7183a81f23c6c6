import { ConsoleLogger, LogLevel } from '@nestjs/common';
import type { LogSettings } from '../config/log-settings';
import { redact, redactValue } from './redact';

const LEVELS: LogLevel[] = ['fatal', 'error', 'warn', 'log', 'debug', 'verbose'];

/**
 * The one logger of a role process: Nest's ConsoleLogger (one JSON object per line with
 * `TIMER_LOG_FORMAT=json`) with every message, stack and logged object redacted before it is written.
 */
export class RoleLogger extends ConsoleLogger {
  constructor(name: string, settings: LogSettings) {
    super(name, {
      json: settings.format === 'json',
      logLevels: LEVELS.slice(0, LEVELS.indexOf(settings.level) + 1),
      colors: settings.format === 'text' && process.stdout.isTTY === true,
    });
  }

  /** Like `error`, on stderr: what ends a process belongs with the errors. */
  override fatal(message: unknown, ...optionalParams: unknown[]): void {
    if (!this.isLevelEnabled('fatal')) return;
    const { messages, context } = this.getContextAndMessagesToPrint([message, ...optionalParams]);
    this.printMessages(messages, context, 'fatal', 'stderr');
  }

  protected override printMessages(messages: unknown[], context?: string, logLevel?: LogLevel, writeStreamType?: 'stdout' | 'stderr', errorStack?: unknown): void {
    super.printMessages(
      messages.map((m) => redactValue(m)),
      context,
      logLevel,
      writeStreamType,
      typeof errorStack === 'string' ? redact(errorStack) : errorStack,
    );
  }

  // Text format writes the stack on its own line after the message.
  protected override printStackTrace(stack: string | undefined): void {
    if (stack) super.printStackTrace(redact(stack));
  }
}

/** A logger for a role process (or one of its command-line tools) from the boot-time log settings. */
export function createRoleLogger(name: string, settings: LogSettings): RoleLogger {
  return new RoleLogger(name, settings);
}

/**
 * Routes what Node would print by itself through the logger, so a JSON log stays JSON: an uncaught
 * exception or unhandled rejection is logged and ends the process with 1 (Node's own behaviour,
 * minus the raw stack on stderr); with JSON, process warnings are logged instead of printed.
 */
export function installProcessLogging(logger: RoleLogger, settings: LogSettings): void {
  const fatal = (what: string) => (e: unknown) => {
    logger.fatal(`${what}: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
    process.exit(1);
  };
  process.on('uncaughtException', fatal('uncaught exception'));
  process.on('unhandledRejection', fatal('unhandled rejection'));
  if (settings.format === 'json') {
    // Node's default 'warning' listener writes text to stderr; replace it (what --no-warnings does).
    process.removeAllListeners('warning');
    process.on('warning', (w: Error) => logger.warn(`${w.name}: ${w.message}`));
  }
}
