import { readFileSync } from 'fs';
import { Logger } from '@nestjs/common';
import { TOPICS } from '@timer/contracts';
import type { PulsarAdminOptions, PulsarClientOptions } from '@timer/pulsar';
import type { RoleConfig } from '@timer/platform';
import { ServerPulsar } from './server-pulsar';
import type { PulsarConsumerConfig } from './pulsar-transport.options';

/** Client options from the role's validated `TIMER_PULSAR_*` settings. */
export function pulsarClientOptions(config: RoleConfig): PulsarClientOptions & PulsarAdminOptions {
  const p = config.pulsar;
  const logger = new Logger(`Pulsar:${config.role.name}`);
  return {
    serviceUrl: p.TIMER_PULSAR_URL,
    token: p.TIMER_PULSAR_TOKEN,
    tlsCaPem: p.TIMER_PULSAR_TLS_CA_FILE ? readFileSync(p.TIMER_PULSAR_TLS_CA_FILE, 'utf8') : undefined,
    tlsAllowInsecure: p.TIMER_PULSAR_TLS_ALLOW_INSECURE,
    logger: { log: (m) => logger.log(m), warn: (m) => logger.warn(m), error: (m) => logger.error(m) },
  };
}

/**
 * The consuming side of a worker role: a `ServerPulsar` on the configured tenant/namespace. It does
 * not provision: the role's `PulsarModule` creates every topic and subscription of the topology at
 * bootstrap (unless `TIMER_PULSAR_PROVISION=false`), and `bootstrapRole` starts the transport after it.
 * A message that cannot be decoded, on any topic, goes to `timer-undecodable` after 3 deliveries.
 */
export function createPulsarServer(
  config: RoleConfig,
  consumers: Record<string, PulsarConsumerConfig> = {},
  defaults: PulsarConsumerConfig = {},
): ServerPulsar {
  return new ServerPulsar({
    client: pulsarClientOptions(config),
    provision: false,
    tenant: config.pulsar.TIMER_PULSAR_TENANT,
    namespace: config.pulsar.TIMER_PULSAR_NAMESPACE,
    consumer: { subscriptionType: 'Shared', ...defaults },
    consumers,
    undecodable: { deadLetterTopic: TOPICS.undecodable },
    // Leave room inside the process's own drain budget to close connections afterwards.
    closeTimeoutMs: Math.max(1_000, config.shutdownTimeoutMs - 3_000),
    startupTimeoutMs: config.pulsar.TIMER_PULSAR_STARTUP_TIMEOUT_MS,
  });
}
