import { PulsarAdmin, WsPulsarClient } from '@timer/pulsar';
import type { PulsarClient, PulsarClientOptions } from '@timer/pulsar';
import type { PulsarClientFactory, PulsarProvisioner } from './pulsar-transport.options';

/** The client of a transport: `WsPulsarClient` for options, else what the factory returns. */
export async function createPulsarClient(
  client: PulsarClientOptions | PulsarClientFactory,
): Promise<PulsarClient> {
  if (typeof client === 'function') {
    return client();
  }
  return new WsPulsarClient(client);
}

/** The default provisioning admin: `PulsarAdmin` on the client's URL and credentials. */
export function createDefaultAdmin(client: PulsarClientOptions): PulsarProvisioner {
  const { serviceUrl, token, tlsCaPem, tlsAllowInsecure, logger } = client;
  return new PulsarAdmin({ serviceUrl, token, tlsCaPem, tlsAllowInsecure, logger });
}
