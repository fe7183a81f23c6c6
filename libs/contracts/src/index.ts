export { SUBSCRIPTIONS, TopicKey, TOPICS } from './lib/topics';
export { fireId, MigrateRangeMessage, SliceMessage, TaskMessage, TopicPayloads } from './lib/messages';
