import { Logger as NestLogger } from '@nestjs/common';
import type { Logger as TypeOrmLoggerInterface } from 'typeorm';
import { isDuplicateKeyError } from './errors';

/** A statement as it may be logged: string literals blanked, whitespace folded, cut at 300 chars. */
export function loggableSql(query: string): string {
  const folded = query.replace(/'(?:[^'\\]|\\.|'')*'|"(?:[^"\\]|\\.)*"/g, "'?'").replace(/\s+/g, ' ').trim();
  return folded.length > 300 ? `${folded.slice(0, 300)}…` : folded;
}

/** A driver error in one line: its code and message (quoted row values are masked by the role's logger). */
function describeError(error: string | Error): string {
  if (typeof error === 'string') return error;
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && !error.message.includes(code) ? `${code}: ${error.message}` : error.message;
}

/**
 * TypeORM's logger, routed through the role's Nest logger (JSON when chosen, redacted). It never logs
 * the parameters TypeORM hands it: they carry callback URLs, headers and bodies, tokens' hashes. SQL
 * text goes out with its string literals blanked. Successful queries are not logged at any level: the
 * executor runs thousands a second.
 */
export class TypeOrmLogger implements TypeOrmLoggerInterface {
  private readonly logger = new NestLogger('TypeORM');

  logQuery(): void {
    // Deliberately silent (see the class comment).
  }

  logQueryError(error: string | Error, query: string): void {
    const line = `query failed: ${describeError(error)} (statement: ${loggableSql(query)})`;
    // A duplicate key is how inserts detect "exists" (a 409, an idempotent re-create): not a problem.
    // Other failures are warnings: the caller retries or reports, and logs the error when it gives up.
    if (isDuplicateKeyError(error)) this.logger.debug(line);
    else this.logger.warn(line);
  }

  logQuerySlow(time: number, query: string): void {
    this.logger.warn(`slow query: ${time} ms (statement: ${loggableSql(query)})`);
  }

  logSchemaBuild(message: string): void {
    this.logger.log(message);
  }

  logMigration(message: string): void {
    this.logger.log(message);
  }

  log(level: 'log' | 'info' | 'warn', message: unknown): void {
    const text = message instanceof Error ? message.message : String(message);
    if (level === 'warn') this.logger.warn(text);
    else this.logger.log(text);
  }
}
