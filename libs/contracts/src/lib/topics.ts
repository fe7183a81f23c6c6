/**
 * Topic and subscription names, local to the configured tenant/namespace (TIMER_PULSAR_TENANT /
 * TIMER_PULSAR_NAMESPACE). docs/architecture.md ("Topics") documents each: producer, consumer, schema, backlog meaning.
 */
export const TOPICS = {
  /** scheduler -> trigger: one message per (minute, bucket) slice to walk. */
  slices: 'timer-slices',
  /** trigger -> executor: one message per fire, keyed by timer id. */
  tasks: 'timer-tasks',
  /**
   * The catch-up lane: task messages of fires already more than CATCH_UP_AFTER_MS late when they are
   * published (past minutes after downtime, reconciler rescues, the migrator's catch-up). The executor
   * works them with a fraction of its concurrency, so fires due now never queue behind a backlog.
   */
  catchUp: 'timer-tasks-catchup',
  /** executor -> executor: fires whose callback failed, redelivered after their backoff. */
  retries: 'timer-task-retries',
  /** fires that exhausted their attempts. */
  deadLetter: 'timer-tasks-dlq',
  /**
   * executor -> failure notifier: fires recorded missed that their owner did not ask to miss (late
   * past their catch-up window), to notify like dead letters. Properties: reason (the record's text).
   */
  missedFires: 'timer-fires-missed',
  /** any consumer -> operators: messages of any topic that could not be decoded (not JSON), as they came. */
  undecodable: 'timer-undecodable',
  /** migrator -> migrator: ranges of a large window split across replicas. */
  migrateRanges: 'timer-migrate-ranges',
} as const;

export const SUBSCRIPTIONS = {
  trigger: 'trigger',
  executor: 'executor',
  migrator: 'migrator',
  /** Operators' view of the dead letters and undecodable messages (`npm run ops -- peek|replay`). */
  ops: 'ops',
  /** The migrator's failure notifier: every dead letter and notified missed fire, POSTed to its failure webhook. */
  failureNotifier: 'failure-notifier',
} as const;

/**
 * Every topic and the durable subscriptions that must exist on it before anything is published:
 * Pulsar keeps a message only for the subscriptions that exist when it arrives, so a slice published
 * before the trigger's subscription was created would be lost to it, and a dead letter with no
 * subscription at all would be discarded. Every role creates these at start-up (idempotently).
 */
export const TOPOLOGY: Readonly<Record<string, readonly string[]>> = {
  [TOPICS.slices]: [SUBSCRIPTIONS.trigger],
  [TOPICS.tasks]: [SUBSCRIPTIONS.executor],
  [TOPICS.catchUp]: [SUBSCRIPTIONS.executor],
  [TOPICS.retries]: [SUBSCRIPTIONS.executor],
  [TOPICS.deadLetter]: [SUBSCRIPTIONS.ops, SUBSCRIPTIONS.failureNotifier],
  [TOPICS.missedFires]: [SUBSCRIPTIONS.failureNotifier],
  [TOPICS.undecodable]: [SUBSCRIPTIONS.ops],
  [TOPICS.migrateRanges]: [SUBSCRIPTIONS.migrator],
};

/**
 * Where a subscription created by provisioning starts: at the oldest message the topic still keeps.
 * A subscription that is new (a fresh namespace, an added role, the ops view of the dead letters)
 * must never skip what was already published to its topic. An existing subscription keeps its cursor.
 */
export const SUBSCRIPTION_INITIAL_POSITION = 'Earliest' as const;

export type TopicKey = keyof typeof TOPICS;

/**
 * Topics whose producers let the broker batch messages into one entry, which saves much of the
 * broker's CPU per fire (docs/benchmarks.md, "Measurements behind the code"). Only `timer-tasks`:
 * its consumer (the executor, Shared) fences every fire with its claim, so a redelivered batch costs duplicate claims, never a duplicate callback.
 * Retries carry deliverAt and are never batched.
 */
export const BATCHED_TOPICS: readonly string[] = [TOPICS.tasks, TOPICS.catchUp];

/** A fire published this late (ms past its run_at) goes to the catch-up lane (`timer-tasks-catchup`). */
export const CATCH_UP_AFTER_MS = 5_000;

/** The lane of a fire's task message, by how late it is when published. */
export function taskTopicOf(runAt: number, now: number): typeof TOPICS.tasks | typeof TOPICS.catchUp {
  return now - runAt > CATCH_UP_AFTER_MS ? TOPICS.catchUp : TOPICS.tasks;
}
