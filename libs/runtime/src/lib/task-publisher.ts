import { Injectable } from '@nestjs/common';
import { MESSAGE_PROPERTIES, TaskMessage, TOPICS } from '@timer/contracts';
import { ClientPulsar, PulsarRecordBuilder } from '@timer/pulsar-transport';
import { lastValueFrom } from 'rxjs';

/**
 * Publishes task messages on `timer-tasks`, keyed by timer id, with the fire id as a property: the
 * trigger for the fires it walks, and every role that creates a fire already due (run now, enable,
 * catch-up) for those. Resolves once the broker persisted the message.
 */
@Injectable()
export class TaskPublisher {
  constructor(private readonly client: ClientPulsar) {}

  async publish(task: TaskMessage, properties: Record<string, string> = {}): Promise<void> {
    const record = new PulsarRecordBuilder(task)
      .setKey(task.timerId)
      .setProperties({ ...properties, [MESSAGE_PROPERTIES.fireId]: task.fireId })
      .build();
    await lastValueFrom(this.client.emit(TOPICS.tasks, record), { defaultValue: undefined });
  }
}
