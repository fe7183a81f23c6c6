import 'reflect-metadata';
import { plainToInstance } from 'class-transformer';
import { validateSync, ValidationError } from 'class-validator';
import { maskUrlPassword } from './mysql-url';

type ConfigClass<T> = new () => T;

/** Raised at boot when the environment does not describe a runnable role; names every bad variable. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  - ${problems.join('\n  - ')}`);
    this.name = 'ConfigError';
  }
}

/** Variables whose value is never repeated in an error, whatever it is (export headers carry tokens). */
const SECRET_NAME = /TOKEN|SECRET|PASSWORD|KEY$|HEADERS$/;

/** A bad value as it may be printed: secrets hidden, a URL's password masked. */
function shownValue(name: string, raw: unknown): string {
  if (SECRET_NAME.test(name)) return '(value hidden)';
  return JSON.stringify(typeof raw === 'string' ? maskUrlPassword(raw) : raw);
}

function describe(errors: ValidationError[], value: Record<string, unknown>): string[] {
  return errors.flatMap((e) => {
    const raw = value[e.property];
    const shown = raw === undefined ? 'missing' : `got ${shownValue(e.property, raw)}`;
    return Object.values(e.constraints ?? {}).map((msg) => `${e.property}: ${msg} (${shown})`);
  });
}

/**
 * Validates the variables a config class declares and returns a typed instance with defaults
 * applied. Only the config module calls this; everything else receives the instance.
 */
export function loadConfig<T extends object>(cls: ConfigClass<T>, env: NodeJS.ProcessEnv = process.env): T {
  const defaults = new cls() as Record<string, unknown>;
  const present: Record<string, unknown> = {};
  for (const key of Object.keys(defaults)) {
    const v = env[key];
    // An empty variable means "unset": compose files and Helm values often render `FOO=`.
    if (v !== undefined && v !== '') present[key] = v;
  }
  const instance = plainToInstance(cls, { ...defaults, ...present }, { enableImplicitConversion: true });
  const errors = validateSync(instance, { whitelist: false, forbidUnknownValues: true });
  if (errors.length > 0) throw new ConfigError(describe(errors, present));
  return instance;
}

/**
 * `TIMER_*` variables no config class knows: most likely typos, which must not pass silently.
 * `TIMER_LOCAL_*` belong to the local scripts (deploy/local, scripts/up.sh), not to the roles.
 */
export function unknownTimerVariables(known: Iterable<string>, env: NodeJS.ProcessEnv = process.env): string[] {
  const set = new Set(known);
  return Object.keys(env)
    .filter((k) => k.startsWith('TIMER_') && !k.startsWith('TIMER_LOCAL_') && !set.has(k))
    .sort();
}
