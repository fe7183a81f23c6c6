import { DynamicModule, Global, Inject, Injectable, Logger, Module, OnApplicationBootstrap, OnApplicationShutdown, Optional } from '@nestjs/common';
import { PulsarAdmin, retryUntil, topicName } from '@timer/pulsar';
import { provisionTopology } from './provision-topology';
import { BATCHED_TOPICS, TOPOLOGY } from '@timer/contracts';
import { DependencyCheck, RoleConfig, RoleDependency } from '@timer/platform';
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

/** Topics (local names) and the durable subscriptions to create on each at start-up. */
export type PulsarTopology = Readonly<Record<string, readonly string[]>>;
export const PULSAR_TOPOLOGY = Symbol('PULSAR_TOPOLOGY');
/** Topics whose producers batch (`readonly string[]`). */
export const PULSAR_BATCHING = Symbol('PULSAR_BATCHING');

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
      inject: [RoleConfig, { token: PULSAR_BATCHING, optional: true }],
      useFactory: (c: RoleConfig, batching?: readonly string[]) =>
        new ClientPulsar({
          client: pulsarClientOptions(c),
          tenant: c.pulsar.TIMER_PULSAR_TENANT,
          namespace: c.pulsar.TIMER_PULSAR_NAMESPACE,
          producer: { batching: batching ?? [] },
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
    @Optional() @Inject(PULSAR_TOPOLOGY) private readonly topology: PulsarTopology = {},
  ) {}

  /**
   * The module with a topology to create at start-up (every topic and its subscriptions) and the
   * topics whose producers batch (see ClientPulsarOptions.producer.batching).
   */
  static forRoot(options: { topology: PulsarTopology; batching?: readonly string[] }): DynamicModule {
    return {
      module: PulsarModule,
      providers: [
        { provide: PULSAR_TOPOLOGY, useValue: options.topology },
        { provide: PULSAR_BATCHING, useValue: options.batching ?? [] },
      ],
    };
  }

  async onApplicationBootstrap(): Promise<void> {
    const p = this.config.pulsar;
    if (!p.TIMER_PULSAR_PROVISION) return;
    const namespace = `${p.TIMER_PULSAR_TENANT}/${p.TIMER_PULSAR_NAMESPACE}`;
    const wanted = Object.entries(this.topology).map(([local, subscriptions]) => ({
      topic: topicName(p.TIMER_PULSAR_TENANT, p.TIMER_PULSAR_NAMESPACE, local),
      subscriptions,
    }));
    // Subscriptions before any publish or subscribe: a message is kept only for the subscriptions
    // that exist when it arrives. The role's bootstrap runs this before its transport subscribes.
    await retryUntil(
      async () => {
        await provisionTopology(this.admin, wanted);
      },
      { what: `provisioning Pulsar namespace ${namespace}`, timeoutMs: p.TIMER_PULSAR_STARTUP_TIMEOUT_MS, logger: this.logger },
    );
  }

  async onApplicationShutdown(): Promise<void> {
    await this.client.close();
  }
}

/**
 * What a role that depends on Pulsar is given (`RoleRuntimeModule.forRole`). Every role creates every
 * topic and subscription, so whichever starts first, nothing is published into a topic its consumer's
 * subscription does not exist on yet.
 */
export const PULSAR_DEPENDENCY: RoleDependency = { module: PulsarModule.forRoot({ topology: TOPOLOGY, batching: BATCHED_TOPICS }), check: PulsarHealthCheck };
