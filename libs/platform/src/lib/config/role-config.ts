import { ConfigError, loadConfig } from './load-config';
import { MysqlEnv, otlpHeadersOf, PulsarEnv, RedisEnv, RoleEnv } from './env.config';
import { Dependency, RoleDefinition, RoleName, ROLES } from './roles';
import { ROLE_SPECIFIC_VARIABLES } from './role-variables';

const ENV_CLASSES = [RoleEnv, MysqlEnv, RedisEnv, PulsarEnv] as const;

/** Every `TIMER_*` name a role reads: the shared config classes' and every role's own. */
export const KNOWN_VARIABLES: readonly string[] = [...ENV_CLASSES.flatMap((c) => Object.keys(new c())), ...ROLE_SPECIFIC_VARIABLES];

/** OTLP/HTTP export of fire traces: the traces URL (`<TIMER_OTLP_ENDPOINT>/v1/traces`) and its headers. */
export interface TracingSettings {
  url: string;
  headers: Record<string, string>;
}

/**
 * The validated configuration of one role process. Built once at boot, before Nest starts, so a bad
 * variable stops the process with a message naming it before anything connects anywhere.
 */
export class RoleConfig {
  constructor(
    readonly role: RoleDefinition,
    readonly http: { host: string; port: number },
    readonly log: { level: RoleEnv['TIMER_LOG_LEVEL']; format: RoleEnv['TIMER_LOG_FORMAT'] },
    readonly shutdownTimeoutMs: number,
    private readonly deps: { mysql?: MysqlEnv; redis?: RedisEnv; pulsar?: PulsarEnv },
    /** Where fire traces are exported (OTLP/HTTP); undefined: tracing is off. */
    readonly tracing?: TracingSettings,
  ) {}

  uses(dep: Dependency): boolean {
    return this.role.dependencies.includes(dep);
  }

  get mysql(): MysqlEnv {
    return this.need('mysql');
  }

  get redis(): RedisEnv {
    return this.need('redis');
  }

  get pulsar(): PulsarEnv {
    return this.need('pulsar');
  }

  private need<K extends Dependency>(dep: K): NonNullable<RoleConfig['deps'][K]> {
    const value = this.deps[dep];
    if (!value) throw new Error(`role ${this.role.name} does not declare a ${dep} dependency`);
    return value as NonNullable<RoleConfig['deps'][K]>;
  }
}

/** Validates the role's variables and each dependency's; reports every problem at once. */
export function loadRoleConfig(name: RoleName, env: NodeJS.ProcessEnv = process.env): RoleConfig {
  const role = ROLES[name];
  const problems: string[] = [];
  const attempt = <T extends object>(cls: new () => T): T | undefined => {
    try {
      return loadConfig(cls, env);
    } catch (e) {
      if (e instanceof ConfigError) problems.push(...e.problems);
      else throw e;
      return undefined;
    }
  };
  const base = attempt(RoleEnv);
  const deps = {
    mysql: role.dependencies.includes('mysql') ? attempt(MysqlEnv) : undefined,
    redis: role.dependencies.includes('redis') ? attempt(RedisEnv) : undefined,
    pulsar: role.dependencies.includes('pulsar') ? attempt(PulsarEnv) : undefined,
  };
  if (problems.length > 0 || !base) throw new ConfigError(problems);
  return new RoleConfig(
    role,
    { host: base.TIMER_HTTP_HOST, port: base.TIMER_HTTP_PORT ?? role.defaultPort },
    { level: base.TIMER_LOG_LEVEL, format: base.TIMER_LOG_FORMAT },
    base.TIMER_SHUTDOWN_TIMEOUT_MS,
    deps,
    base.TIMER_OTLP_ENDPOINT ? { url: tracesUrlOf(base.TIMER_OTLP_ENDPOINT), headers: otlpHeadersOf(base.TIMER_OTLP_HEADERS) } : undefined,
  );
}

/** The collector's traces URL: `/v1/traces` under the endpoint, unless it names that path already. */
function tracesUrlOf(endpoint: string): string {
  const base = endpoint.replace(/\/+$/, '');
  return base.endsWith('/v1/traces') ? base : `${base}/v1/traces`;
}
