export type {
  ConsumerOptions,
  Consumer,
  DeadLetterPolicy,
  MessageId,
  MessageListener,
  OutgoingMessage,
  Producer,
  ProducerOptions,
  PulsarClient,
  PulsarClientOptions,
  PulsarLogger,
  ReceivedMessage,
  SubscriptionType,
  TopicName,
} from './lib/pulsar-client.interface';
export { WsPulsarClient } from './lib/ws-pulsar-client';
export { PulsarAdmin } from './lib/pulsar-admin';
export type { PeekedMessage, PulsarAdminOptions, PulsarHealth, SubscriptionStats, TopicStats } from './lib/pulsar-admin';
export { comparePositions, messageIdPosition } from './lib/ws-frames';
export type { MessagePosition } from './lib/ws-frames';
export { canonicalTopicName, parseTopicName, topicName } from './lib/topic-name';
export type { ParsedTopicName, TopicDomain } from './lib/topic-name';
export {
  PulsarAdminError,
  PulsarClosedError,
  PulsarConnectError,
  PulsarError,
  PulsarSendError,
  PulsarTimeoutError,
} from './lib/errors';
export { Backoff } from './lib/backoff';
export { isTransient, retryUntil } from './lib/retry-until';
export type { RetryUntilOptions } from './lib/retry-until';
