import { MESSAGE_PROPERTIES, parseTaskMessage, SUBSCRIPTION_INITIAL_POSITION, SUBSCRIPTIONS, TOPICS } from '@timer/contracts';
import { comparePositions, messageIdPosition, PulsarAdmin, PulsarAdminError, PulsarClient, topicName } from '@timer/pulsar';
import type { PeekedMessage, ReceivedMessage } from '@timer/pulsar';

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
  /** Further dead letters of a fire already replayed in this run: acked, not sent again. */
  duplicates: number;
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
   * Moves up to `max` of the messages `fromLocal` holds when the replay starts (through the ops
   * subscription) to `toLocal`, keeping key and properties and marking each with `replayed-from`.
   * It stops at the newest message present at the start, so what arrives meanwhile (a replayed fire
   * that failed again and was dead-lettered again) stays for the next run; and it sends each fire
   * at most once (a further dead letter of a fire already sent is acked as a duplicate), so no run
   * calls a callback twice. Each message is acked only after the broker persisted its copy, so a
   * crash replays a message twice rather than losing it. Stops early when nothing arrives for `idleMs`.
   */
  async replay(fromLocal: string, toLocal: string, max: number, idleMs = 1_500): Promise<ReplayResult> {
    const from = this.topic(fromLocal);
    const to = this.topic(toLocal);
    await this.admin.ensureSubscription(from, OPS_SUBSCRIPTION, SUBSCRIPTION_INITIAL_POSITION);
    const end = await this.admin.lastMessageId(from);
    const result: ReplayResult = { replayed: 0, duplicates: 0, from, to };
    if (end.ledgerId < 0) return result; // the topic never stored a message
    // Exclusive: the ops subscription hands messages out in the order they are stored.
    const consumer = await this.client.subscribe({ topic: from, subscription: OPS_SUBSCRIPTION, subscriptionType: 'Exclusive', receiverQueueSize: 100 });
    const producer = await this.client.createProducer({ topic: to });
    const sent = new Set<string>();
    try {
      while (result.replayed < max) {
        const message = await consumer.receive(idleMs).catch(() => undefined);
        if (!message) break;
        const position = messageIdPosition(message.messageId);
        if (!position) throw new Error(`cannot tell where message ${message.messageId} is stored; stopped (it stays for the next run)`);
        const order = comparePositions(position, end);
        // Newer than the start: left unacked (closing the consumer hands it back) for the next run.
        if (order > 0) break;
        const fire = fireIdOf(message);
        if (fire !== undefined && sent.has(fire)) {
          result.duplicates++;
        } else {
          await producer.send({
            payload: message.payload,
            key: message.key,
            properties: { ...message.properties, [MESSAGE_PROPERTIES.replayedFrom]: from },
          });
          if (fire !== undefined) sent.add(fire);
          result.replayed++;
        }
        await consumer.acknowledge(message);
        // Not `order === 0 -> stop`: the newest entry may be a batch of several messages (same position).
      }
    } finally {
      await producer.close();
      await consumer.close();
    }
    return result;
  }
}

/** The fire a task message stands for: its fire id property, else the fire of its payload. */
function fireIdOf(message: ReceivedMessage): string | undefined {
  const property = message.properties[MESSAGE_PROPERTIES.fireId];
  if (property) return property;
  try {
    const parsed = parseTaskMessage(JSON.parse(message.payload.toString('utf8')));
    return parsed.ok ? parsed.value.fireId : undefined;
  } catch {
    return undefined;
  }
}
