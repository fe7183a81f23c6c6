import { SUBSCRIPTIONS, TOPICS } from '@timer/contracts';
import { RoleConfig } from '@timer/platform';
import { createPulsarServer, PulsarConsumerConfig, ServerPulsar } from '@timer/pulsar-transport';
import { ExecutorConfig } from './config/executor.env';

/** How the executor consumes: tasks and retries, Shared subscription `executor`, N handlers each. */
export function executorConsumers(c: ExecutorConfig): Record<string, PulsarConsumerConfig> {
  const consumer: PulsarConsumerConfig = {
    subscription: SUBSCRIPTIONS.executor,
    subscriptionType: 'Shared',
    concurrency: c.concurrency,
    // Not more than it can work on: on a Shared subscription a large queue hoards other replicas' work.
    receiverQueueSize: Math.min(1_000, c.concurrency),
    // A nacked message (its outcome could not be written) comes back after this.
    negativeAckRedeliveryDelayMs: 5_000,
  };
  return { [TOPICS.tasks]: consumer, [TOPICS.retries]: { ...consumer } };
}

export function createExecutorServer(role: RoleConfig, c: ExecutorConfig): ServerPulsar {
  return createPulsarServer(role, executorConsumers(c));
}
