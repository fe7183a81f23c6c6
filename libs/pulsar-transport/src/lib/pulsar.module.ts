import { Global, Inject, Injectable, Logger, Module, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { PulsarAdmin, retryUntil } from '@timer/pulsar';
import { DependencyCheck, RoleConfig } from '@timer/platform';
import { ClientPulsar } from './client-pulsar';
import { pulsarClientOptions } from './pulsar-config';

/** Readiness: the broker's own health check (a produce/consume round trip on its heartbeat topic). */
@Injectable()
export class PulsarHealthCheck implements DependencyCheck {
  readonly name = 'pulsar';

  constructor(private readonly admin: PulsarAdmin) {}

  async ping(): Promise<void> {
    const health = await this.admin.health();
    if (!health.healthy) throw new Error(health.detail);
  }
}

/**
 * The role's publishing side (`ClientPulsar`, emitting to the configured tenant/namespace), the
 * admin client, and the readiness check. Provision at start-up: the tenant and namespace exist
 * before anything publishes.
 */
@Global()
@Module({
  providers: [
    { provide: PulsarAdmin, inject: [RoleConfig], useFactory: (c: RoleConfig) => new PulsarAdmin(pulsarClientOptions(c)) },
    {
      provide: ClientPulsar,
      inject: [RoleConfig],
      useFactory: (c: RoleConfig) =>
        new ClientPulsar({
          client: pulsarClientOptions(c),
          tenant: c.pulsar.TIMER_PULSAR_TENANT,
          namespace: c.pulsar.TIMER_PULSAR_NAMESPACE,
        }),
    },
    PulsarHealthCheck,
  ],
  exports: [PulsarAdmin, ClientPulsar, PulsarHealthCheck],
})
export class PulsarModule implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(PulsarModule.name);

  constructor(
    @Inject(RoleConfig) private readonly config: RoleConfig,
    private readonly admin: PulsarAdmin,
    private readonly client: ClientPulsar,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const p = this.config.pulsar;
    if (!p.TIMER_PULSAR_PROVISION) return;
    const namespace = `${p.TIMER_PULSAR_TENANT}/${p.TIMER_PULSAR_NAMESPACE}`;
    await retryUntil(
      async () => {
        await this.admin.ensureTenant(p.TIMER_PULSAR_TENANT);
        await this.admin.ensureNamespace(namespace);
      },
      { what: `provisioning Pulsar namespace ${namespace}`, timeoutMs: p.TIMER_PULSAR_STARTUP_TIMEOUT_MS, logger: this.logger },
    );
  }

  async onApplicationShutdown(): Promise<void> {
    await this.client.close();
  }
}
