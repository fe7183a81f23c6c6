/**
 * Topic and subscription names, local to the configured tenant/namespace (TIMER_PULSAR_TENANT /
 * TIMER_PULSAR_NAMESPACE). docs/topics.md documents each: producer, consumer, schema, backlog meaning.
 */
export const TOPICS = {
  /** scheduler -> trigger: one message per (minute, bucket) slice to walk. */
  slices: 'timer-slices',
  /** trigger -> executor: one message per fire, keyed by timer id. */
  tasks: 'timer-tasks',
  /** executor -> executor: fires whose callback failed, redelivered after their backoff. */
  retries: 'timer-task-retries',
  /** fires that exhausted their attempts. */
  deadLetter: 'timer-tasks-dlq',
  /** migrator -> migrator: ranges of a large window split across replicas. */
  migrateRanges: 'timer-migrate-ranges',
} as const;

export const SUBSCRIPTIONS = {
  trigger: 'trigger',
  executor: 'executor',
  migrator: 'migrator',
} as const;

export type TopicKey = keyof typeof TOPICS;
