export { ServerPulsar, PULSAR_TRANSPORT } from './lib/server-pulsar';
export { ClientPulsar, REQUEST_RESPONSE_UNSUPPORTED } from './lib/client-pulsar';
export { PulsarContext } from './lib/pulsar.context';
export type { PulsarContextArgs } from './lib/pulsar.context';
export { PulsarRecord, PulsarRecordBuilder } from './lib/pulsar-record.builder';
export type { PulsarRecordOptions } from './lib/pulsar-record.builder';
export { PulsarSerializer } from './lib/pulsar.serializer';
export { PulsarDeserializer } from './lib/pulsar.deserializer';
export type { PulsarDeserializeOptions } from './lib/pulsar.deserializer';
export {
  DEFAULT_CLOSE_TIMEOUT_MS,
  DEFAULT_CONCURRENCY,
  DEFAULT_SUBSCRIPTION,
} from './lib/pulsar-transport.options';
export type {
  ClientPulsarOptions,
  PulsarClientFactory,
  PulsarConsumerConfig,
  PulsarDeadLetter,
  PulsarProvisioner,
  PulsarProvisionerFactory,
  PulsarServerEvents,
  PulsarStatus,
  ServerPulsarOptions,
  UndecodableOptions,
} from './lib/pulsar-transport.options';
export { DEAD_LETTER_PROPERTIES, DEFAULT_MAX_UNDECODABLE_DELIVERIES, UNDECODABLE_REASON } from './lib/undecodable-messages';
export { DEFAULT_NAMESPACE, DEFAULT_TENANT, resolveTopicName } from './lib/topic-name';
export type { TopicDefaults } from './lib/topic-name';
export { createPulsarServer, pulsarClientOptions } from './lib/pulsar-config';
export { PULSAR_DEPENDENCY, PULSAR_TOPOLOGY, PulsarHealthCheck, PulsarModule, PulsarTopology } from './lib/pulsar.module';
