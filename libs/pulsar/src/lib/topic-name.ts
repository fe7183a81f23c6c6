import type { TopicName } from './pulsar-client.interface';

export type TopicDomain = 'persistent' | 'non-persistent';

export interface ParsedTopicName {
  domain: TopicDomain;
  tenant: string;
  namespace: string;
  local: string;
}

/** `persistent://tenant/namespace/local`. */
export function topicName(tenant: string, namespace: string, local: string, domain: TopicDomain = 'persistent'): TopicName {
  for (const [what, value] of [['tenant', tenant], ['namespace', namespace], ['topic', local]] as const) {
    if (!value || value.includes('/')) throw new TypeError(`invalid ${what} name '${value}'`);
  }
  return `${domain}://${tenant}/${namespace}/${local}`;
}

/**
 * Parses a topic name the way Pulsar clients do: `domain://tenant/ns/topic`, `tenant/ns/topic`
 * (persistent) or a bare `topic` (persistent, public/default).
 */
export function parseTopicName(topic: TopicName): ParsedTopicName {
  let domain: TopicDomain = 'persistent';
  let rest = topic;
  const scheme = /^([a-z-]+):\/\/(.*)$/.exec(topic);
  if (scheme) {
    if (scheme[1] !== 'persistent' && scheme[1] !== 'non-persistent') {
      throw new TypeError(`invalid topic domain in '${topic}'`);
    }
    domain = scheme[1];
    rest = scheme[2];
  } else if (!topic.includes('/')) {
    rest = `public/default/${topic}`;
  }
  const parts = rest.split('/');
  if (parts.length !== 3 || parts.some((p) => p.length === 0)) {
    throw new TypeError(`invalid topic name '${topic}': expected [domain://]tenant/namespace/topic`);
  }
  return { domain, tenant: parts[0], namespace: parts[1], local: parts[2] };
}

/** The fully qualified form of any accepted topic name. */
export function canonicalTopicName(topic: TopicName): TopicName {
  const t = parseTopicName(topic);
  return `${t.domain}://${t.tenant}/${t.namespace}/${t.local}`;
}

/** `persistent/tenant/ns/topic` with each segment URL-encoded: the tail of WebSocket and admin paths. */
export function topicUrlPath(topic: TopicName): string {
  const t = parseTopicName(topic);
  return [t.domain, t.tenant, t.namespace, t.local].map(encodeURIComponent).join('/');
}
