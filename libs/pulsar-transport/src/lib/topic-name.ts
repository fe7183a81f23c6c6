import { canonicalTopicName, parseTopicName, topicName } from '@timer/pulsar';
import type { TopicName } from '@timer/pulsar';

/**
 * How an `@EventPattern` / `emit` pattern becomes a Pulsar topic. A pattern is one of
 * - a local name `timer.due` (no `/`): placed in the transport's configured tenant and namespace;
 * - a short name `tenant/namespace/topic` (persistent, like Pulsar's own short form);
 * - a full name `persistent://tenant/namespace/topic` or `non-persistent://tenant/namespace/topic`.
 *
 * Tenant, namespace and local name must consist of letters, digits and `-_=:.` (so object
 * patterns such as `{ cmd: 'x' }` are refused). Building and parsing full names is
 * `@timer/pulsar`'s `topicName` / `parseTopicName`.
 */

export interface TopicDefaults {
  tenant: string;
  namespace: string;
}

export const DEFAULT_TENANT = 'public';
export const DEFAULT_NAMESPACE = 'default';

const NAME = /^[-=:.\w]+$/;

/** The full topic name of a pattern (see the module comment for the accepted forms). */
export function resolveTopicName(
  pattern: string,
  defaults: TopicDefaults = { tenant: DEFAULT_TENANT, namespace: DEFAULT_NAMESPACE },
): TopicName {
  if (typeof pattern !== 'string' || pattern.length === 0) {
    throw new TypeError(`A Pulsar topic pattern must be a non-empty string, got ${JSON.stringify(pattern)}`);
  }
  let full: TopicName;
  try {
    full = pattern.includes('/')
      ? canonicalTopicName(pattern)
      : topicName(defaults.tenant, defaults.namespace, pattern);
  } catch (err) {
    throw new TypeError(
      `Cannot map pattern "${pattern}" to a Pulsar topic (${(err as Error).message}): ` +
        `use "<topic>", "<tenant>/<namespace>/<topic>" or "persistent://<tenant>/<namespace>/<topic>"`,
    );
  }
  const parts = parseTopicName(full);
  for (const [what, value] of [
    ['tenant', parts.tenant],
    ['namespace', parts.namespace],
    ['topic', parts.local],
  ] as const) {
    if (!NAME.test(value)) {
      throw new TypeError(`Cannot map pattern "${pattern}" to a Pulsar topic: ${what} "${value}" may only use letters, digits and -_=:.`);
    }
  }
  return full;
}
