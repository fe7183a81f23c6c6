export { BATCHED_TOPICS, SUBSCRIPTIONS, TopicKey, TOPICS, TOPOLOGY } from './lib/topics';
export { fireId, MigrateRangeMessage, SliceMessage, TaskMessage, TopicPayloads } from './lib/messages';
