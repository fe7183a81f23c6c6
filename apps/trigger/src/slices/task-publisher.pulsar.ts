import { Injectable } from '@nestjs/common';
import { MESSAGE_PROPERTIES, TaskMessage, TOPICS } from '@timer/contracts';
import { ClientPulsar, PulsarRecordBuilder } from '@timer/pulsar-transport';
import { lastValueFrom } from 'rxjs';
import { TaskPublisher } from './slice-walker';

/** Publishes task messages on `timer-tasks`, keyed by timer id, with the fire id as a property. */
@Injectable()
export class PulsarTaskPublisher implements TaskPublisher {
  constructor(private readonly client: ClientPulsar) {}

  async publish(task: TaskMessage): Promise<void> {
    const record = new PulsarRecordBuilder(task).setKey(task.timerId).setProperty(MESSAGE_PROPERTIES.fireId, task.fireId).build();
    // emit resolves once the broker persisted the message.
    await lastValueFrom(this.client.emit(TOPICS.tasks, record));
  }
}
