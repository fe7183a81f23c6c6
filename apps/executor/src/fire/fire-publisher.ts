import { Injectable } from '@nestjs/common';
import { lastValueFrom } from 'rxjs';
import { MESSAGE_PROPERTIES, TaskMessage, TOPICS } from '@timer/contracts';
import { ClientPulsar, PulsarRecordBuilder } from '@timer/pulsar-transport';

const FIRE_ID_PROPERTY = MESSAGE_PROPERTIES.fireId;
const RECHECK_PROPERTY = MESSAGE_PROPERTIES.recheck;

/** What the executor publishes; every method resolves once the broker has persisted the message. */
@Injectable()
export class FirePublisher {
  constructor(private readonly client: ClientPulsar) {}

  /** The next attempt, on the retries topic, delivered at `at`. */
  async retry(message: TaskMessage, at: number): Promise<void> {
    await this.emit(TOPICS.retries, message, { [FIRE_ID_PROPERTY]: message.fireId }, at);
  }

  /**
   * The same message again at `at` (on the retries topic, which the executor also consumes): an
   * early message, or a recheck of a fire another executor holds.
   */
  async defer(message: TaskMessage, at: number, recheck: boolean): Promise<void> {
    const props: Record<string, string> = { [FIRE_ID_PROPERTY]: message.fireId };
    if (recheck) props[RECHECK_PROPERTY] = '1';
    await this.emit(TOPICS.retries, message, props, at);
  }

  /** A message its app's share could not take now (fair delivery), back at `at`, counting the hand-backs. */
  async handBack(message: TaskMessage, at: number, deferrals: number): Promise<void> {
    await this.emit(TOPICS.retries, message, { [FIRE_ID_PROPERTY]: message.fireId, [MESSAGE_PROPERTIES.deferrals]: String(deferrals) }, at);
  }

  /** A fire that failed for good, with why in the properties. */
  async deadLetter(message: TaskMessage, properties: Record<string, string>): Promise<void> {
    await this.emit(TOPICS.deadLetter, message, { ...properties, [FIRE_ID_PROPERTY]: message.fireId });
  }

  /** A missed fire its app's failure webhook is told of (`MISSED_REASONS_NOTIFIED`), with the record's reason. */
  async missed(message: TaskMessage, reason: string): Promise<void> {
    await this.emit(TOPICS.missedFires, message, { [MESSAGE_PROPERTIES.reason]: reason, [FIRE_ID_PROPERTY]: message.fireId });
  }

  private async emit(topic: string, message: TaskMessage, properties: Record<string, string>, deliverAt?: number): Promise<void> {
    const b = new PulsarRecordBuilder<TaskMessage>(message).setKey(message.timerId).setProperties(properties);
    if (deliverAt !== undefined) b.setDeliverAt(deliverAt);
    await lastValueFrom(this.client.emit(topic, b.build()), { defaultValue: undefined });
  }
}
