import { Inject, Injectable } from '@nestjs/common';
import { MESSAGE_PROPERTIES, TaskMessage, taskTopicOf } from '@timer/contracts';
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
}
