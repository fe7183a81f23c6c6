import { SUBSCRIPTIONS, TOPICS } from '@timer/contracts';
import { RoleConfig } from '@timer/platform';
import { createPulsarServer, PulsarConsumerConfig, ServerPulsar } from '@timer/pulsar-transport';
import { ExecutorConfig } from './config/executor.env';
import { catchUpConcurrency } from './intake/fire-lanes';

/**
 * How the executor consumes: tasks and retries with TIMER_EXECUTOR_CONCURRENCY handlers each, and the
 * catch-up lane with a tenth of that (at least 1), all on the Shared subscription `executor`. A message
 * may carry many fires: the fires themselves are bounded by the same numbers in {@link FireLanes}, so
 * catch-up work (past minutes, rescued fires) never takes more than a tenth of them from fires due now.
 */
export function executorConsumers(c: ExecutorConfig): Record<string, PulsarConsumerConfig> {
  const consumer: PulsarConsumerConfig = {
    subscription: SUBSCRIPTIONS.executor,
    subscriptionType: 'Shared',
    concurrency: c.concurrency,
    // Not more than it can work on: on a Shared subscription a large queue hoards other replicas' work.
    receiverQueueSize: Math.min(1_000, c.concurrency),
    // A nacked message (its claim or outcome could not be written: MySQL away) comes back after this,
    // so fires go out within about a second of MySQL's return, not a fixed 5 s later.
    negativeAckRedeliveryDelayMs: 1_000,
  };
  const catchUp = catchUpConcurrency(c.concurrency);
  return {
    [TOPICS.tasks]: consumer,
    [TOPICS.retries]: { ...consumer },
    [TOPICS.catchUp]: { ...consumer, concurrency: catchUp, receiverQueueSize: catchUp },
  };
}

export function createExecutorServer(role: RoleConfig, c: ExecutorConfig): ServerPulsar {
  return createPulsarServer(role, executorConsumers(c));
}
