import { Injectable } from '@nestjs/common';
import { SliceMessage, TOPICS } from '@timer/contracts';
import { ClientPulsar, PulsarRecordBuilder } from '@timer/pulsar-transport';
import { lastValueFrom } from 'rxjs';

/** Publishes slice offers; resolves once the broker persisted the message. */
export interface SlicePublisher {
  publish(message: SliceMessage): Promise<void>;
}

@Injectable()
export class PulsarSlicePublisher implements SlicePublisher {
  constructor(private readonly client: ClientPulsar) {}

  async publish(message: SliceMessage): Promise<void> {
    const record = new PulsarRecordBuilder(message).setKey(`${message.minute}:${message.bucket}`).build();
    await lastValueFrom(this.client.emit(TOPICS.slices, record));
  }
}
