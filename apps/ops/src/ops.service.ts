import { MESSAGE_PROPERTIES, SUBSCRIPTION_INITIAL_POSITION, SUBSCRIPTIONS, TOPICS } from '@timer/contracts';
import { PulsarAdmin, PulsarAdminError, PulsarClient, topicName } from '@timer/pulsar';
import type { PeekedMessage } from '@timer/pulsar';

/** The subscription operators read dead letters through; created at the earliest position. */
export const OPS_SUBSCRIPTION = SUBSCRIPTIONS.ops;

export interface SubscriptionRow {
  name: string;
  type?: string;
  backlog: number;
  unacked: number;
  consumers: number;
  rateOut: number;
}

export interface TopicRow {
  local: string;
  topic: string;
  exists: boolean;
  rateIn: number;
  rateOut: number;
  msgIn: number;
  storageBytes: number;
  producers: number;
  subscriptions: SubscriptionRow[];
}

export interface ReplayResult {
  replayed: number;
  from: string;
  to: string;
}

const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

/**
 * What operators ask of the topics when fires are late: backlog, rates and consumers per topic and
 * subscription, and the dead letters (peek, replay). Works on the service's tenant/namespace.
 */
export class OpsService {
  constructor(
    private readonly admin: PulsarAdmin,
    private readonly client: PulsarClient,
    private readonly tenant: string,
    private readonly namespace: string,
  ) {}

  topic(local: string): string {
    return topicName(this.tenant, this.namespace, local);
  }

  /** One row per service topic, in the order of `TOPICS`; a topic not created yet is reported as such. */
  async topics(locals: string[] = Object.values(TOPICS)): Promise<TopicRow[]> {
    return Promise.all(
      locals.map(async (local) => {
        const topic = this.topic(local);
        try {
          const s = await this.admin.topicStats(topic);
          return {
            local,
            topic,
            exists: true,
            rateIn: num(s.msgRateIn),
            rateOut: num(s.msgRateOut),
            msgIn: num(s.msgInCounter),
            storageBytes: num(s.storageSize),
            producers: s.publishers.length,
            subscriptions: Object.entries(s.subscriptions)
              .map(([name, sub]) => ({
                name,
                type: sub.type,
                backlog: num(sub.msgBacklog),
                unacked: num(sub.unackedMessages),
                consumers: sub.consumers.length,
                rateOut: num(sub.msgRateOut),
              }))
              .sort((a, b) => a.name.localeCompare(b.name)),
          };
        } catch (e) {
          if (e instanceof PulsarAdminError && e.status === 404) {
            return { local, topic, exists: false, rateIn: 0, rateOut: 0, msgIn: 0, storageBytes: 0, producers: 0, subscriptions: [] };
          }
          throw e;
        }
      }),
    );
  }

  /** The oldest `count` messages of a topic's ops subscription, without consuming them. */
  async peek(local: string, count: number): Promise<PeekedMessage[]> {
    const topic = this.topic(local);
    await this.admin.ensureSubscription(topic, OPS_SUBSCRIPTION, SUBSCRIPTION_INITIAL_POSITION);
    return this.admin.peekMessages(topic, OPS_SUBSCRIPTION, count);
  }

  /**
   * Moves up to `max` messages from `fromLocal` (through the ops subscription) to `toLocal`, keeping
   * key and properties and marking each with `replayed-from`. Each is acked only after the broker
   * persisted its copy, so a crash replays a message twice rather than losing it. Stops when the
   * backlog stays empty for `idleMs`.
   */
  async replay(fromLocal: string, toLocal: string, max: number, idleMs = 1_500): Promise<ReplayResult> {
    const from = this.topic(fromLocal);
    const to = this.topic(toLocal);
    await this.admin.ensureSubscription(from, OPS_SUBSCRIPTION, SUBSCRIPTION_INITIAL_POSITION);
    const consumer = await this.client.subscribe({ topic: from, subscription: OPS_SUBSCRIPTION, subscriptionType: 'Exclusive', receiverQueueSize: 100 });
    const producer = await this.client.createProducer({ topic: to });
    let replayed = 0;
    try {
      while (replayed < max) {
        const message = await consumer.receive(idleMs).catch(() => undefined);
        if (!message) break;
        await producer.send({
          payload: message.payload,
          key: message.key,
          properties: { ...message.properties, [MESSAGE_PROPERTIES.replayedFrom]: from },
        });
        await consumer.acknowledge(message);
        replayed++;
      }
    } finally {
      await producer.close();
      await consumer.close();
    }
    return { replayed, from, to };
  }
}
