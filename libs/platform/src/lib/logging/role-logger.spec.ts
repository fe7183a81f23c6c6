import { Logger } from '@nestjs/common';
import { installProcessLogging, RoleLogger } from './role-logger';

/** Everything the logger writes to stdout and stderr while `fn` runs, one entry per write. */
function capture(fn: () => void): string[] {
  const lines: string[] = [];
  const spies = (['stdout', 'stderr'] as const).map((s) =>
    jest.spyOn(process[s], 'write').mockImplementation((chunk: string | Uint8Array) => {
      lines.push(String(chunk));
      return true;
    }),
  );
  try {
    fn();
  } finally {
    spies.forEach((s) => s.mockRestore());
  }
  return lines;
}

describe('RoleLogger', () => {
  it('writes one JSON object per line for every level and shape of message, redacted', () => {
    const logger = new RoleLogger('timer-test', { format: 'json', level: 'verbose' });
    const err = Object.assign(new Error('boom mysql://u:Pw1@h/db'), { parameters: ['P4ram'], sql: "SELECT 'P4ram'" });
    const lines = capture(() => {
      logger.log('plain');
      logger.verbose('multi\nline', 'Ctx');
      logger.warn({ body: 'B0dy', n: 1 });
      logger.error(err);
      logger.error('with stack', err.stack);
      logger.fatal('dying: Bearer T0ken');
    });
    expect(lines).toHaveLength(6);
    for (const line of lines) {
      expect(line.endsWith('\n')).toBe(true);
      expect(line.trimEnd()).not.toContain('\n');
      expect(() => JSON.parse(line)).not.toThrow();
    }
    const all = lines.join('');
    for (const secret of ['Pw1', 'P4ram', 'B0dy', 'T0ken']) expect(all).not.toContain(secret);
    expect(JSON.parse(lines[1])).toMatchObject({ level: 'verbose', context: 'Ctx', message: 'multi\nline' });
  });

  it('filters by level and keeps text format for humans', () => {
    const logger = new RoleLogger('timer-test', { format: 'text', level: 'warn' });
    const lines = capture(() => {
      logger.debug('hidden');
      logger.warn('shown mysql://u:Pw2@h/db');
    });
    expect(lines).toHaveLength(1);
    expect(lines[0]).toContain('shown mysql://u:***@h/db');
  });

  it('is what the static Nest logger writes through once installed (TypeORM, Nest internals)', () => {
    const logger = new RoleLogger('timer-test', { format: 'json', level: 'log' });
    Logger.overrideLogger(logger);
    try {
      const lines = capture(() => new Logger('TypeORM').warn("query failed: Duplicate entry 'Secr3t' for key 'uk'"));
      expect(JSON.parse(lines[0])).toMatchObject({ level: 'warn', context: 'TypeORM', message: "query failed: Duplicate entry '?' for key 'uk'" });
    } finally {
      Logger.overrideLogger(true);
    }
  });
});

describe('installProcessLogging', () => {
  const events = ['uncaughtException', 'unhandledRejection', 'warning'] as const;
  let before: Record<string, NodeJS.WarningListener[]>;
  beforeEach(() => {
    before = Object.fromEntries(events.map((e) => [e, process.listeners(e as 'warning')]));
  });
  afterEach(() => {
    for (const e of events) {
      process.removeAllListeners(e);
      for (const l of before[e]) process.on(e as 'warning', l);
    }
    jest.restoreAllMocks();
  });

  it('logs an uncaught error as one JSON line and exits 1; warnings go through the logger', () => {
    const logger = new RoleLogger('timer-test', { format: 'json', level: 'log' });
    installProcessLogging(logger, { format: 'json', level: 'log' });
    const exit = jest.spyOn(process, 'exit').mockImplementation((() => undefined) as never);
    const lines = capture(() => {
      const onUncaught = process.listeners('uncaughtException').at(-1)!;
      onUncaught(new Error('boom at mysql://u:Pw3@h/db'), 'uncaughtException');
      process.listeners('warning').forEach((l) => l(new Error('deprecated thing')));
    });
    expect(exit).toHaveBeenCalledWith(1);
    expect(process.listeners('warning')).toHaveLength(1);
    expect(lines.map((l) => JSON.parse(l) as { level: string; message: string })).toEqual([
      expect.objectContaining({ level: 'fatal', message: expect.stringMatching(/^uncaught exception: Error: boom at mysql:\/\/u:\*\*\*@h\/db/) }),
      expect.objectContaining({ level: 'warn', message: 'Error: deprecated thing' }),
    ]);
  });
});
