import { SUBSCRIPTIONS, TOPICS } from '@timer/contracts';
import type { PulsarConsumerConfig } from '@timer/pulsar-transport';
import { TriggerConfig } from '../config/trigger.env';

/** The trigger's consumer of `timer-slices`: Shared, as many slices at once as configured. */
export function sliceConsumers(config: TriggerConfig): Record<string, PulsarConsumerConfig> {
  return {
    [TOPICS.slices]: {
      subscription: SUBSCRIPTIONS.trigger,
      subscriptionType: 'Shared',
      concurrency: config.concurrency,
      // The proxy pushes at most this many unacked messages: no more than we walk, so a busy
      // replica does not sit on slices an idle one could take.
      receiverQueueSize: config.concurrency,
      // A slice nacked at shutdown or after failures goes to another trigger soon (it resumes at its cursor).
      negativeAckRedeliveryDelayMs: 1_000,
    },
  };
}
