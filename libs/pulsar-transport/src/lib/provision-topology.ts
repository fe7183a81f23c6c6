import { SUBSCRIPTION_INITIAL_POSITION } from '@timer/contracts';
import { parseTopicName } from '@timer/pulsar';
import type { PulsarProvisioner } from './pulsar-transport.options';

/** A topic (full name) and the durable subscriptions that must exist on it. */
export interface TopicSubscriptions {
  topic: string;
  subscriptions: readonly string[];
}

/** What {@link provisionTopology} ensured. */
export interface ProvisionedCounts {
  tenants: number;
  namespaces: number;
  topics: number;
  subscriptions: number;
}

/**
 * The one way topics and subscriptions are created (roles at start-up, `ServerPulsar` for what it
 * consumes): tenants, namespaces, topics, then subscriptions, each idempotently. A new subscription
 * starts at {@link SUBSCRIPTION_INITIAL_POSITION} (Earliest), so it never skips a message its topic
 * still keeps; an existing one keeps its cursor. Non-persistent topics get neither topic nor
 * subscription (the broker keeps nothing for them).
 */
export async function provisionTopology(admin: PulsarProvisioner, wanted: readonly TopicSubscriptions[]): Promise<ProvisionedCounts> {
  const tenants = new Set<string>();
  const namespaces = new Set<string>();
  const persistent: TopicSubscriptions[] = [];
  for (const t of wanted) {
    const parts = parseTopicName(t.topic);
    tenants.add(parts.tenant);
    namespaces.add(`${parts.tenant}/${parts.namespace}`);
    if (parts.domain === 'persistent') persistent.push(t);
  }
  for (const tenant of tenants) await admin.ensureTenant(tenant);
  for (const namespace of namespaces) await admin.ensureNamespace(namespace);
  const topics = [...new Set(persistent.map((t) => t.topic))];
  for (const topic of topics) await admin.ensureTopic(topic);
  let subscriptions = 0;
  for (const t of persistent) {
    for (const sub of t.subscriptions) {
      await admin.ensureSubscription(t.topic, sub, SUBSCRIPTION_INITIAL_POSITION);
      subscriptions++;
    }
  }
  return { tenants: tenants.size, namespaces: namespaces.size, topics: topics.length, subscriptions };
}
