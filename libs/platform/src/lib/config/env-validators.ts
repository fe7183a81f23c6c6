import { accessSync, constants, statSync } from 'fs';
import { registerDecorator, ValidationArguments } from 'class-validator';
import { mysqlTlsPolicy, parseMysqlUrl } from './mysql-url';

/** A file the process can read now (a CA bundle, a key): checked at boot, not at first connect. */
export function IsReadableFile(): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isReadableFile',
      target: target.constructor,
      propertyName: String(propertyName),
      validator: {
        validate: (value: unknown) => typeof value === 'string' && readableFileProblem(value) === undefined,
        defaultMessage: (args?: ValidationArguments) => `${readableFileProblem(String(args?.value))}`,
      },
    });
}

function readableFileProblem(path: string): string | undefined {
  try {
    if (!statSync(path).isFile()) return `${path} is not a file`;
    accessSync(path, constants.R_OK);
    return undefined;
  } catch (e) {
    return `cannot read ${path} (${(e as NodeJS.ErrnoException).code ?? (e as Error).message})`;
  }
}

/**
 * `TIMER_MYSQL_URL`: parses with `parseMysqlUrl` and agrees with `TIMER_MYSQL_TLS_CA_FILE` (the
 * sibling property of the same object). The message never repeats the password.
 */
export function IsMysqlUrl(): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'isMysqlUrl',
      target: target.constructor,
      propertyName: String(propertyName),
      validator: {
        validate: (value: unknown, args?: ValidationArguments) => mysqlUrlProblem(value, args) === undefined,
        defaultMessage: (args?: ValidationArguments) => `${mysqlUrlProblem(args?.value, args)}`,
      },
    });
}

function mysqlUrlProblem(value: unknown, args?: ValidationArguments): string | undefined {
  if (typeof value !== 'string') return 'must be a mysql:// URL';
  try {
    const url = parseMysqlUrl(value);
    const caFile = (args?.object as { TIMER_MYSQL_TLS_CA_FILE?: unknown } | undefined)?.TIMER_MYSQL_TLS_CA_FILE;
    mysqlTlsPolicy(url.sslMode, typeof caFile === 'string' && caFile !== '');
    return undefined;
  } catch (e) {
    return `must be mysql://user:password@host:port/database[?ssl-mode=...]: ${(e as Error).message}`;
  }
}

/** A number not below the sibling variable `other` (of the same config object). */
export function NotBelow(other: string): PropertyDecorator {
  return (target, propertyName) =>
    registerDecorator({
      name: 'notBelow',
      target: target.constructor,
      propertyName: String(propertyName),
      constraints: [other],
      validator: {
        validate: (value: unknown, args?: ValidationArguments) => {
          const floor = (args?.object as Record<string, unknown> | undefined)?.[other];
          return typeof value !== 'number' || typeof floor !== 'number' || value >= floor;
        },
        defaultMessage: (args?: ValidationArguments) => `must be at least ${other} (${String((args?.object as Record<string, unknown> | undefined)?.[other])})`,
      },
    });
}
