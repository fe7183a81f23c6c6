import { Inject, Injectable } from '@nestjs/common';
import { MESSAGE_PROPERTIES, TaskMessage, taskBatchOf, taskTopicOf } from '@timer/contracts';
import { CLOCK, NowClock } from '@timer/platform';
import { ClientPulsar, PulsarRecordBuilder } from '@timer/pulsar-transport';
import { lastValueFrom } from 'rxjs';

/**
 * Publishes task messages keyed by timer id, with the fire id as a property: the trigger for the
 * fires it walks, and every role that creates a fire already due (run now, enable, catch-up) for
 * those. A fire due now goes on `timer-tasks`; one already more than CATCH_UP_AFTER_MS late on the
 * catch-up lane `timer-tasks-catchup`. Resolves once the broker persisted the message.
 */
@Injectable()
export class TaskPublisher {
  constructor(
    private readonly client: ClientPulsar,
    @Inject(CLOCK) private readonly clock: NowClock,
  ) {}

  async publish(task: TaskMessage, properties: Record<string, string> = {}): Promise<void> {
    const record = new PulsarRecordBuilder(task)
      .setKey(task.timerId)
      .setProperties({ ...properties, [MESSAGE_PROPERTIES.fireId]: task.fireId })
      .build();
    await lastValueFrom(this.client.emit(taskTopicOf(task.runAt, this.clock.now()), record), { defaultValue: undefined });
  }

  /**
   * Publishes fires as one task message (`{tasks: [...]}`; one fire: the plain form), on the lane of
   * the earliest: fires of one trigger step are due within the step, so they share a lane. Resolves once
   * the broker persisted it; callers chunk at MAX_TASKS_PER_MESSAGE.
   */
  async publishBatch(tasks: readonly TaskMessage[]): Promise<void> {
    if (tasks.length === 0) return;
    if (tasks.length === 1) return this.publish(tasks[0]);
    let earliest = tasks[0].runAt;
    for (const t of tasks) if (t.runAt < earliest) earliest = t.runAt;
    const first = tasks[0];
    const last = tasks[tasks.length - 1];
    const record = new PulsarRecordBuilder(taskBatchOf(tasks))
      .setKey(first.timerId)
      .setProperties({
        [MESSAGE_PROPERTIES.firstFireId]: first.fireId,
        [MESSAGE_PROPERTIES.lastFireId]: last.fireId,
        [MESSAGE_PROPERTIES.fireCount]: String(tasks.length),
      })
      .build();
    await lastValueFrom(this.client.emit(taskTopicOf(earliest, this.clock.now()), record), { defaultValue: undefined });
  }
}
