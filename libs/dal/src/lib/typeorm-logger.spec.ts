import { Logger } from '@nestjs/common';
import type { Logger as TypeOrmLoggerInterface } from 'typeorm';
import { loggableSql, TypeOrmLogger } from './typeorm-logger';

// As TypeORM calls it: with the parameters, which it must not log.
const typeorm = (): TypeOrmLoggerInterface => new TypeOrmLogger();

describe('TypeOrmLogger', () => {
  const calls: [string, string][] = [];
  beforeEach(() => {
    calls.length = 0;
    for (const level of ['log', 'warn', 'debug', 'error'] as const) {
      jest.spyOn(Logger.prototype, level).mockImplementation((...args: unknown[]) => void calls.push([level, String(args[0])]));
    }
  });
  afterEach(() => jest.restoreAllMocks());

  it('logs a failed query with its code and statement, never its parameters', () => {
    const error = Object.assign(new Error('Data too long for column \'output\' at row 1'), { code: 'ER_DATA_TOO_LONG' });
    typeorm().logQueryError(error, "INSERT INTO `timers`(`notify_http_param`) VALUES (?) /* 'lit' */", ['{"body":"S3cret"}']);
    expect(calls).toEqual([['warn', "query failed: ER_DATA_TOO_LONG: Data too long for column 'output' at row 1 (statement: INSERT INTO `timers`(`notify_http_param`) VALUES (?) /* '?' */)"]]);
  });

  it('logs a duplicate key (how a 409 is detected) at debug', () => {
    const dup = Object.assign(new Error("Duplicate entry 'a-b' for key 'uk_app_live_name'"), { code: 'ER_DUP_ENTRY', errno: 1062 });
    typeorm().logQueryError(dup, 'INSERT INTO timers VALUES (?)', ['S3cret']);
    expect(calls).toHaveLength(1);
    expect(calls[0][0]).toBe('debug');
    expect(calls[0][1]).not.toContain('S3cret');
  });

  it('logs slow queries, migrations and driver warnings; successful queries not at all', () => {
    const l = typeorm();
    l.logQuery('SELECT 1 FROM apps WHERE token_hash = ?', ['S3cret']);
    l.logQuerySlow(1500, 'SELECT * FROM tasks WHERE id = ?');
    l.logMigration('Migration X has been executed successfully.');
    l.log('warn', 'MySQL connection raised an error. Error: read ECONNRESET');
    expect(calls.map((c) => c[0])).toEqual(['warn', 'log', 'warn']);
    expect(calls[0][1]).toBe('slow query: 1500 ms (statement: SELECT * FROM tasks WHERE id = ?)');
  });

  it('blanks string literals and shortens long statements', () => {
    expect(loggableSql("SELECT 'a''b', \"c\"\n  FROM t WHERE x = 'it\\'s'")).toBe("SELECT '?', '?' FROM t WHERE x = '?'");
    expect(loggableSql(`SELECT ${'x, '.repeat(200)}1`)).toHaveLength(301);
  });
});
