import type { OutgoingEvent, Serializer } from '@nestjs/microservices';
import type { OutgoingMessage } from '@timer/pulsar';
import { PulsarRecord } from './pulsar-record.builder';

/**
 * Default producer-side serializer of {@link ClientPulsar}: turns `{ pattern, data }` into the
 * message to send. `data` may be a {@link PulsarRecord} (key, properties, delayed delivery).
 * The payload is the JSON of the data, except a Buffer, which is sent as it is.
 * The pattern is not part of the message: it names the topic.
 */
export class PulsarSerializer implements Serializer<OutgoingEvent, OutgoingMessage> {
  serialize(packet: OutgoingEvent): OutgoingMessage {
    const record = packet.data instanceof PulsarRecord ? (packet.data as PulsarRecord) : undefined;
    const data: unknown = record ? record.data : packet.data;
    const message: OutgoingMessage = { payload: encodePayload(data) };
    const options = record?.options;
    if (!options) {
      return message;
    }
    if (options.key !== undefined) {
      if (typeof options.key !== 'string') {
        throw new TypeError(`PulsarRecord key must be a string, got ${typeof options.key}`);
      }
      message.key = options.key;
    }
    if (options.properties !== undefined) {
      message.properties = checkProperties(options.properties);
    }
    if (options.deliverAt !== undefined) {
      const at = options.deliverAt instanceof Date ? options.deliverAt.getTime() : options.deliverAt;
      if (typeof at !== 'number' || !Number.isFinite(at)) {
        throw new TypeError(`PulsarRecord deliverAt must be a Date or epoch ms, got ${String(options.deliverAt)}`);
      }
      message.deliverAt = at;
    }
    if (options.deliverAfterMs !== undefined) {
      const ms = options.deliverAfterMs;
      if (typeof ms !== 'number' || !Number.isFinite(ms) || ms < 0) {
        throw new TypeError(`PulsarRecord deliverAfterMs must be a non-negative number, got ${String(ms)}`);
      }
      message.deliverAfterMs = ms;
    }
    return message;
  }
}

function encodePayload(data: unknown): Buffer | string {
  if (Buffer.isBuffer(data)) {
    return data;
  }
  const json = JSON.stringify(data);
  if (json === undefined) {
    throw new TypeError(`Cannot serialize ${typeof data} as a Pulsar message payload`);
  }
  return json;
}

function checkProperties(properties: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(properties)) {
    if (typeof value !== 'string') {
      throw new TypeError(`PulsarRecord property "${name}" must be a string, got ${typeof value}`);
    }
    out[name] = value;
  }
  return out;
}
