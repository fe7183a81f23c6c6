import { resolveSettings, type ConnectionSettings } from './connection-settings';
import { PulsarAdminError } from './errors';
import { httpRequest, type HttpResponse } from './http-request';
import type { PulsarLogger, TopicName } from './pulsar-client.interface';
import type { MessagePosition } from './ws-frames';
import { parseTopicName, topicUrlPath } from './topic-name';

export interface PulsarAdminOptions {
  /** Broker web service URL, e.g. `http://127.0.0.1:8080`. */
  serviceUrl: string;
  /** Sent as `Authorization: Bearer`. */
  token?: string;
  tlsCaPem?: string;
  tlsAllowInsecure?: boolean;
  /** Per-request timeout (ms). Default 10000. */
  requestTimeoutMs?: number;
  logger?: PulsarLogger;
}

/** The parts of the broker's subscription stats the code base reads; the rest is passed through. */
export interface SubscriptionStats {
  msgBacklog: number;
  unackedMessages: number;
  /** Epoch ms of the oldest message not acknowledged; -1 when none. Only when asked (`topicStats(t, { earliestTimeInBacklog: true })`). */
  earliestMsgPublishTimeInBacklog?: number;
  type?: string;
  consumers: Array<{ consumerName?: string; unackedMessages?: number; [field: string]: unknown }>;
  [field: string]: unknown;
}

/** The parts of the broker's topic stats the code base reads; the rest is passed through. */
export interface TopicStats {
  msgInCounter: number;
  msgOutCounter: number;
  storageSize?: number;
  publishers: Array<Record<string, unknown>>;
  subscriptions: Record<string, SubscriptionStats>;
  [field: string]: unknown;
}

/** One entry peeked from a subscription's backlog (not consumed, not acknowledged). */
export interface PeekedMessage {
  /** `ledgerId:entryId` as the admin API reports it (not the WebSocket base64 form). */
  entryId: string;
  payload: Buffer;
  key?: string;
  properties: Record<string, string>;
  /** Epoch ms; 0 when the broker did not say. */
  publishTime: number;
}

export interface PulsarHealth {
  healthy: boolean;
  /** `ok`, or what failed. */
  detail: string;
  latencyMs: number;
}

/**
 * Idempotent setup and inspection over the broker's admin REST API (`/admin/v2`). Every failure is
 * a PulsarAdminError carrying the HTTP status and the broker's reason.
 */
export class PulsarAdmin {
  private readonly settings: ConnectionSettings;
  private readonly timeoutMs: number;

  constructor(options: PulsarAdminOptions) {
    this.settings = resolveSettings(options);
    this.timeoutMs = options.requestTimeoutMs ?? 10_000;
  }

  /** Cluster names the broker knows (`standalone` on a standalone broker). */
  async clusters(): Promise<string[]> {
    const res = await this.call('GET', '/admin/v2/clusters', [200]);
    return JSON.parse(res.body.toString('utf8')) as string[];
  }

  /** Creates the tenant if missing, allowed on `allowedClusters` (default: every cluster the broker knows). */
  async ensureTenant(tenant: string, allowedClusters?: string[]): Promise<void> {
    const path = `/admin/v2/tenants/${encodeURIComponent(tenant)}`;
    const existing = await this.call('GET', path, [200, 404]);
    if (existing.status === 200) return;
    const clusters = allowedClusters ?? (await this.clusters());
    await this.call('PUT', path, [204, 409], { allowedClusters: clusters, adminRoles: [] });
  }

  /** Creates `tenant/namespace` if missing (the tenant must exist). */
  async ensureNamespace(namespace: string): Promise<void> {
    const parts = namespace.split('/');
    if (parts.length !== 2 || !parts[0] || !parts[1]) throw new TypeError(`namespace must be 'tenant/namespace', got '${namespace}'`);
    await this.call('PUT', `/admin/v2/namespaces/${parts.map(encodeURIComponent).join('/')}`, [204, 409]);
  }

  /** Creates a non-partitioned topic if missing. */
  async ensureTopic(topic: TopicName): Promise<void> {
    await this.call('PUT', `/admin/v2/${topicUrlPath(topic)}`, [204, 409]);
  }

  /**
   * Creates a durable subscription if missing, starting at `position` (default Latest). An existing
   * subscription keeps its position.
   */
  async ensureSubscription(topic: TopicName, subscription: string, position: 'Earliest' | 'Latest' = 'Latest'): Promise<void> {
    // Earliest is MessageId (-1, -1); without a body the broker starts at the latest message.
    const body = position === 'Earliest' ? { ledgerId: -1, entryId: -1 } : undefined;
    try {
      await this.call('PUT', `${this.subscriptionPath(topic, subscription)}`, [204, 409], body);
    } catch (error) {
      // Several roles create the same subscriptions at start-up; the loser of a concurrent create
      // gets 412 "Subscription Busy". The subscription then exists, which is all that was asked.
      if (!(error instanceof PulsarAdminError) || error.status !== 412) throw error;
      const res = await this.call('GET', `/admin/v2/${topicUrlPath(topic)}/subscriptions`, [200]);
      if (!(JSON.parse(res.body.toString('utf8')) as string[]).includes(subscription)) throw error;
    }
  }

  async topicStats(topic: TopicName, options: { earliestTimeInBacklog?: boolean } = {}): Promise<TopicStats> {
    const query = options.earliestTimeInBacklog ? '?getEarliestTimeInBacklog=true' : '';
    const res = await this.call('GET', `/admin/v2/${topicUrlPath(topic)}/stats${query}`, [200]);
    return JSON.parse(res.body.toString('utf8')) as TopicStats;
  }

  /** Up to `count` entries from the start of the subscription's backlog; fewer if the backlog is shorter. */
  async peekMessages(topic: TopicName, subscription: string, count: number): Promise<PeekedMessage[]> {
    const peeked: PeekedMessage[] = [];
    for (let position = 1; position <= count; position++) {
      const res = await this.call('GET', `${this.subscriptionPath(topic, subscription)}/position/${position}`, [200, 404]);
      if (res.status === 404) break;
      peeked.push(toPeekedMessage(res));
    }
    return peeked;
  }

  /**
   * The position of the newest message the topic stores (`/lastMessageId`); `{-1, -1}` when it never
   * stored one. Messages published later compare greater (`comparePositions`).
   */
  async lastMessageId(topic: TopicName): Promise<MessagePosition> {
    const path = `/admin/v2/${topicUrlPath(topic)}/lastMessageId`;
    const res = await this.call('GET', path, [200]);
    const { ledgerId, entryId } = JSON.parse(res.body.toString('utf8')) as Record<string, unknown>;
    if (typeof ledgerId !== 'number' || typeof entryId !== 'number') {
      throw new PulsarAdminError('GET', path, res.status, `no ledgerId/entryId in ${reasonOf(res.body)}`);
    }
    return { ledgerId, entryId };
  }

  /** Deletes a non-partitioned topic; a missing one is fine. `force` also drops its producers/consumers. */
  async deleteTopic(topic: TopicName, force = false): Promise<void> {
    await this.call('DELETE', `/admin/v2/${topicUrlPath(topic)}${force ? '?force=true' : ''}`, [204, 404]);
  }

  /**
   * For readiness checks: the broker's own health check (`/admin/v2/brokers/health`, which
   * publishes and reads a heartbeat message). Never throws.
   */
  async health(): Promise<PulsarHealth> {
    const started = Date.now();
    try {
      const res = await this.call('GET', '/admin/v2/brokers/health', [200]);
      return { healthy: true, detail: res.body.toString('utf8').trim() || 'ok', latencyMs: Date.now() - started };
    } catch (error) {
      return { healthy: false, detail: (error as Error).message, latencyMs: Date.now() - started };
    }
  }

  private subscriptionPath(topic: TopicName, subscription: string): string {
    if (parseTopicName(topic).domain !== 'persistent') throw new TypeError(`subscriptions can only be managed on persistent topics: ${topic}`);
    return `/admin/v2/${topicUrlPath(topic)}/subscription/${encodeURIComponent(subscription)}`;
  }

  private async call(method: string, path: string, expected: number[], body?: unknown): Promise<HttpResponse> {
    let res: HttpResponse;
    try {
      res = await httpRequest(this.settings.httpBase + path, {
        method,
        headers: this.settings.headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        timeoutMs: this.timeoutMs,
        tls: this.settings.tls,
      });
    } catch (error) {
      throw new PulsarAdminError(method, path, 0, (error as Error).message);
    }
    if (!expected.includes(res.status)) throw new PulsarAdminError(method, path, res.status, reasonOf(res.body));
    return res;
  }
}

/** The broker's `{"reason": ...}`, else the body text (shortened). */
function reasonOf(body: Buffer): string {
  const text = body.toString('utf8');
  try {
    const parsed = JSON.parse(text) as { reason?: unknown };
    if (typeof parsed.reason === 'string') return parsed.reason;
  } catch {
    // not JSON: Jetty error pages and the like
  }
  return text.replace(/\s+/g, ' ').trim().slice(0, 500);
}

/**
 * A peeked entry's properties: Pulsar 4.0 sends them as one `X-Pulsar-PROPERTY` header holding a JSON
 * object; 3.x sent one `X-Pulsar-PROPERTY-<name>` header each (both are read).
 */
function parseProperties(json: string): Record<string, string> {
  try {
    const parsed: unknown = JSON.parse(json);
    if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return {};
    return Object.fromEntries(Object.entries(parsed).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)]));
  } catch {
    return {};
  }
}

function toPeekedMessage(res: HttpResponse): PeekedMessage {
  const properties: Record<string, string> = {};
  let key: string | undefined;
  let keyIsBase64 = false;
  let entryId = '';
  let publishTime = 0;
  // rawHeaders keep the case of property names, which node lower-cases in `headers`.
  const raw = res.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) {
    const name = raw[i];
    const value = raw[i + 1];
    const lower = name.toLowerCase();
    if (lower === 'x-pulsar-property') Object.assign(properties, parseProperties(value));
    else if (lower.startsWith('x-pulsar-property-')) properties[name.slice('x-pulsar-property-'.length)] = value;
    else if (lower === 'x-pulsar-message-id') entryId = value;
    else if (lower === 'x-pulsar-partition-key') key = value;
    else if (lower === 'x-pulsar-partition-key-b64-encoded') keyIsBase64 = value === 'true';
    else if (lower === 'x-pulsar-publish-time') publishTime = Date.parse(value) || 0;
  }
  if (key !== undefined && keyIsBase64) key = Buffer.from(key, 'base64').toString('utf8');
  return { entryId, payload: res.body, key, properties, publishTime };
}
