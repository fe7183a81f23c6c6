import { DynamicModule, INestApplication, Logger, PipeTransform, ValidationPipe } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { CustomTransportStrategy } from '@nestjs/microservices';
import { ConfigError, unknownTimerVariables } from '../config/load-config';
import { bootLogSettings } from '../config/log-settings';
import { KNOWN_VARIABLES, loadRoleConfig, RoleConfig } from '../config/role-config';
import { RoleName } from '../config/roles';
import { LifecycleService } from '../health/lifecycle.service';
import { MetricsService } from '../metrics/metrics.service';
import { createRoleLogger, installProcessLogging, RoleLogger } from '../logging/role-logger';
import { Counter, Registry } from 'prom-client';

export interface RoleBootstrapOptions {
  role: RoleName;
  /**
   * Builds the root module from the validated config. A role with settings of its own validates
   * them here with `loadConfig`, so a `ConfigError` stops the process before anything connects.
   */
  module: (config: RoleConfig) => DynamicModule;
  /** Worker roles: the transport to consume from (hybrid app: HTTP stays for /health and /metrics). */
  microservice?: (app: INestApplication, config: RoleConfig) => CustomTransportStrategy;
  /** Role-specific `TIMER_*` variables, so they are not reported as unknown. */
  extraVariables?: readonly string[];
  /** The global validation pipe, when the role words its messages itself (default: Nest's, whitelisting). */
  validationPipe?: PipeTransform;
}

/**
 * Starts one role: validated config, structured logger, global validation, the optional transport,
 * the HTTP listener, and a SIGTERM/SIGINT drain that stops consuming before connections close.
 */
export async function bootstrapRole(options: RoleBootstrapOptions): Promise<INestApplication> {
  // The logger comes first, so that every line from here on (a config error, Nest's, TypeORM's, an
  // uncaught error) is in the chosen format and redacted.
  const logSettings = bootLogSettings();
  const logger = createRoleLogger(`timer-${options.role}`, logSettings);
  Logger.overrideLogger(logger);
  installProcessLogging(logger, logSettings);
  let config: RoleConfig;
  let rootModule: DynamicModule;
  try {
    config = loadRoleConfig(options.role);
    // Role-specific settings are validated while the root module is built (see `module`).
    rootModule = options.module(config);
  } catch (e) {
    if (e instanceof ConfigError) {
      logger.fatal(e.message);
      process.exit(1);
    }
    throw e;
  }
  const app = await NestFactory.create(rootModule, { logger, bufferLogs: true });
  app.useGlobalPipes(options.validationPipe ?? new ValidationPipe({ whitelist: true, forbidNonWhitelisted: true, transform: true }));
  if (options.microservice) {
    const strategy = options.microservice(app, config);
    countUndecodable(strategy, app.get(MetricsService, { strict: false }).registry);
    app.connectMicroservice({ strategy }, { inheritAppConfig: true });
    // Bootstrap hooks first: they provision the broker's topics and subscriptions (PulsarModule), which
    // must exist before the transport subscribes, or a new subscription would start at Latest.
    await app.init();
    await app.startAllMicroservices();
  }
  await app.listen(config.http.port, config.http.host);

  const unknown = unknownTimerVariables([...KNOWN_VARIABLES, ...(options.extraVariables ?? [])]);
  if (unknown.length > 0) logger.warn(`ignoring unknown variables (typo?): ${unknown.join(', ')}`);
  logger.log(`${options.role} listening on http://${config.http.host}:${config.http.port} (health: /health, metrics: /metrics)`);
  installDrain(app, config, logger);
  return app;
}

/** The `.catch` of a role's `main.ts`: an error before the role listens ends the process with 1. */
export function exitOnBootFailure(role: RoleName): (e: unknown) => never {
  return (e) => {
    createRoleLogger(`timer-${role}`, bootLogSettings()).fatal(`failed to start: ${e instanceof Error ? e.stack : String(e)}`);
    process.exit(1);
  };
}

function installDrain(app: INestApplication, config: RoleConfig, logger: RoleLogger): void {
  let closing = false;
  const drain = async (signal: NodeJS.Signals) => {
    if (closing) return;
    closing = true;
    logger.log(`${signal}: draining (up to ${config.shutdownTimeoutMs} ms)`);
    const deadline = setTimeout(() => {
      logger.error(`drain exceeded ${config.shutdownTimeoutMs} ms; exiting with unfinished work (it will be redelivered)`);
      process.exit(1);
    }, config.shutdownTimeoutMs);
    deadline.unref();
    try {
      app.get(LifecycleService, { strict: false }).startDraining();
      // Nest would run destroy hooks (closing Redis and MySQL) before the transport: stop consuming and
      // finish in-flight messages first, so they can still be recorded and acked.
      await Promise.all(app.getMicroservices().map((m) => m.close()));
      await app.close();
      logger.log('stopped cleanly');
      process.exit(0);
    } catch (e) {
      logger.error(`error while draining: ${e instanceof Error ? e.stack : String(e)}`);
      process.exit(1);
    }
  };
  process.once('SIGTERM', (s) => void drain(s));
  process.once('SIGINT', (s) => void drain(s));
}

/**
 * `timer_undecodable_messages_total{topic}`: messages the role's transport could not decode and
 * dead-lettered to `timer-undecodable` (a transport that reports them emits `deadLetter`).
 */
function countUndecodable(strategy: CustomTransportStrategy, registry: Registry): void {
  const events = strategy as { on?: (event: string, callback: (d: { topic: string }) => void) => unknown };
  if (typeof events.on !== 'function') return;
  const counter = new Counter({
    name: 'timer_undecodable_messages_total',
    help: 'Messages no handler could decode (not UTF-8 JSON), dead-lettered to timer-undecodable after their last delivery',
    labelNames: ['topic'],
    registers: [registry],
  });
  events.on('deadLetter', (d) => counter.inc({ topic: d.topic }));
}
