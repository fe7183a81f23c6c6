import { Inject, Injectable, Logger, OnApplicationBootstrap } from '@nestjs/common';
import { MESSAGE_PROPERTIES, TaskMessage, taskBatchOf, taskBatchPropertiesOf, taskTopicOf, TOPICS } from '@timer/contracts';
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
export class TaskPublisher implements OnApplicationBootstrap {
  private readonly logger = new Logger(TaskPublisher.name);

  constructor(
    private readonly client: ClientPulsar,
    @Inject(CLOCK) private readonly clock: NowClock,
  ) {}

  /**
   * Both lanes' producers are opened at start-up (after the topology is provisioned), not by their first
   * fire, which would wait for the open: 348 ms for the migrator's catch-up producer in the catch-up
   * bench, while the broker took the backlog. Not awaited: a slow broker must not hold the role's start.
   */
  onApplicationBootstrap(): void {
    this.client.prepare([TOPICS.tasks, TOPICS.catchUp]).catch((e: unknown) => {
      this.logger.warn(`opening the task producers at start-up failed (the first message opens them): ${(e as Error).message}`);
    });
  }

  async publish(task: TaskMessage, properties: Record<string, string> = {}): Promise<void> {
    const record = new PulsarRecordBuilder(task)
      .setKey(task.timerId)
      .setProperties({ ...properties, [MESSAGE_PROPERTIES.fireId]: task.fireId })
      .build();
    await lastValueFrom(this.client.emit(taskTopicOf(task.runAt, this.clock.now()), record), { defaultValue: undefined });
  }

  /**
   * Publishes fires as one task message per lane (`{tasks: [...]}`; one fire: the plain form): each fire
   * goes on the lane its own lateness picks, so a fire due now is never sent down the catch-up lane with
   * late ones it was found with (a step or a catch-up of mixed lateness). Resolves once the broker persisted
   * them; callers chunk at MAX_TASKS_PER_MESSAGE.
   */
  async publishBatch(tasks: readonly TaskMessage[]): Promise<void> {
    const now = this.clock.now();
    const lanes = new Map<string, TaskMessage[]>();
    for (const t of tasks) {
      const topic = taskTopicOf(t.runAt, now);
      const lane = lanes.get(topic);
      if (lane) lane.push(t);
      else lanes.set(topic, [t]);
    }
    await Promise.all([...lanes].map(([topic, fires]) => (fires.length === 1 ? this.publish(fires[0]) : this.emitBatch(topic, fires))));
  }

  private async emitBatch(topic: string, tasks: TaskMessage[]): Promise<void> {
    const record = new PulsarRecordBuilder(taskBatchOf(tasks)).setKey(tasks[0].timerId).setProperties(taskBatchPropertiesOf(tasks)).build();
    await lastValueFrom(this.client.emit(topic, record), { defaultValue: undefined });
  }
}
