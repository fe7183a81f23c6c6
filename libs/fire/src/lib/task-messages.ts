import { FireRef, fireId, MESSAGE_PROPERTIES, TaskBatchMessage, taskBatchOf, taskBatchPropertiesOf, TaskMessage } from '@timer/contracts';
import { PulsarRecord, PulsarRecordBuilder } from '@timer/pulsar-transport';

/** How a fire's task message differs from a first, scheduled delivery. */
export interface TaskMessageOptions {
  /** 1-based attempt of the callback; 1 unless a rescue carries a fire's progress on. */
  attempt?: number;
  /** A fire of a backfill: delivered however late (see `TaskMessage.backfill`). */
  backfill?: boolean;
}

/**
 * The task message of a fire. Every role that sends one builds it here, so a field added to the
 * contract is set in one place and no sender forgets it.
 */
export function taskMessage(fire: FireRef, options: TaskMessageOptions = {}): TaskMessage {
  const { timerId, runAt } = fire;
  return { timerId, runAt, fireId: fireId(timerId, runAt), attempt: options.attempt ?? 1, ...(options.backfill ? { backfill: true as const } : {}) };
}

/**
 * The broker record of one fire's task message, keyed by its timer; the fire id and trace context
 * also go in its properties, which logs, the dead-letter tools and tracing read without decoding the payload.
 */
export function taskRecord(task: TaskMessage, properties: Record<string, string> = {}, deliverAt?: number): PulsarRecord<TaskMessage> {
  const props: Record<string, string> = { ...properties, [MESSAGE_PROPERTIES.fireId]: task.fireId };
  if (task.traceparent) props[MESSAGE_PROPERTIES.traceparent] = task.traceparent;
  return withDelivery(new PulsarRecordBuilder(task).setKey(task.timerId).setProperties(props), deliverAt);
}

/** The broker record of many fires in one task message (`{tasks: [...]}`), keyed by the first fire's timer. */
export function taskBatchRecord(tasks: readonly TaskMessage[], properties: Record<string, string> = {}, deliverAt?: number): PulsarRecord<TaskBatchMessage> {
  const builder = new PulsarRecordBuilder(taskBatchOf(tasks)).setKey(tasks[0].timerId).setProperties({ ...taskBatchPropertiesOf(tasks), ...properties });
  return withDelivery(builder, deliverAt);
}

function withDelivery<T>(builder: PulsarRecordBuilder<T>, deliverAt: number | undefined): PulsarRecord<T> {
  if (deliverAt !== undefined) builder.setDeliverAt(deliverAt);
  return builder.build();
}
