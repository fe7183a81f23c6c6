/**
 * Encoding and decoding of the Pulsar WebSocket API's JSON frames. Kept free of I/O so the wire
 * format is unit-tested on its own. Hot paths build strings by concatenation: payload and message
 * ids are base64 and contexts are base36, so neither needs JSON escaping.
 */
import type { MessageId, OutgoingMessage } from './pulsar-client.interface';

/** `{result, messageId, context, errorMsg}`: the proxy's answer to one send. */
export interface ProducerAckFrame {
  result: string;
  messageId?: string;
  context?: string;
  errorMsg?: string;
}

/** A message pushed on a consumer session. `publishTime` is ISO-8601 text on the wire. */
export interface ConsumerMessageFrame {
  messageId: string;
  payload: string;
  properties?: Record<string, string>;
  publishTime?: string;
  redeliveryCount?: number;
  key?: string;
}

export function payloadToBase64(payload: Buffer | string): string {
  return (typeof payload === 'string' ? Buffer.from(payload, 'utf8') : payload).toString('base64');
}

/** The send frame; `context` must be JSON-safe without escaping (the producer uses base36 counters). */
export function encodeSendFrame(message: OutgoingMessage, context: string): string {
  let frame = `{"payload":"${payloadToBase64(message.payload)}","context":"${context}"`;
  if (message.key !== undefined) frame += `,"key":${JSON.stringify(message.key)}`;
  if (message.properties !== undefined) frame += `,"properties":${JSON.stringify(message.properties)}`;
  if (message.deliverAt !== undefined && message.deliverAt > 0) {
    frame += `,"deliverAt":${Math.trunc(message.deliverAt)}`;
  }
  if (message.deliverAfterMs !== undefined && message.deliverAfterMs > 0) {
    frame += `,"deliverAfterMs":${Math.trunc(message.deliverAfterMs)}`;
  }
  return frame + '}';
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Parses a producer-session frame; undefined when it is not a send answer. */
export function decodeProducerAck(text: string): ProducerAckFrame | undefined {
  const parsed: unknown = JSON.parse(text);
  if (!isRecord(parsed) || typeof parsed.result !== 'string') return undefined;
  return {
    result: parsed.result,
    messageId: typeof parsed.messageId === 'string' ? parsed.messageId : undefined,
    context: typeof parsed.context === 'string' ? parsed.context : undefined,
    errorMsg: typeof parsed.errorMsg === 'string' ? parsed.errorMsg : undefined,
  };
}

/** Parses a consumer-session frame; undefined for frames that are not messages. */
export function decodeConsumerMessage(text: string): ConsumerMessageFrame | undefined {
  const parsed: unknown = JSON.parse(text);
  if (!isRecord(parsed) || typeof parsed.messageId !== 'string' || typeof parsed.payload !== 'string') {
    return undefined;
  }
  return parsed as unknown as ConsumerMessageFrame;
}

/** Epoch ms of the proxy's publishTime text; NaN-safe (0 when missing or unparsable). */
export function parsePublishTime(text: string | undefined): number {
  if (!text) return 0;
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? 0 : ms;
}

/**
 * The varint fields of a WebSocket message id (base64 of Pulsar's MessageIdData protobuf: 1
 * ledger_id, 2 entry_id, 3 partition, 4 batch_index, ...) in order, up to the first unreadable byte;
 * `complete` says whether the whole id was read.
 */
function messageIdFields(messageId: MessageId): { fields: Map<number, number>; complete: boolean } {
  const bytes = Buffer.from(String(messageId), 'base64');
  const fields = new Map<number, number>();
  let i = 0;
  const varint = (): number => {
    let shift = 0;
    let value = 0;
    for (;;) {
      if (i >= bytes.length) throw new RangeError('truncated varint');
      const b = bytes[i++];
      value += (b & 0x7f) * 2 ** shift;
      if ((b & 0x80) === 0) return value;
      shift += 7;
      if (shift > 63) throw new RangeError('varint too long');
    }
  };
  try {
    while (i < bytes.length) {
      const tag = varint();
      const field = Math.floor(tag / 8);
      const wire = tag % 8;
      if (wire === 0) fields.set(field, varint());
      else if (wire === 1) i += 8;
      else if (wire === 2) i += varint();
      else if (wire === 5) i += 4;
      else return { fields, complete: false };
    }
  } catch {
    return { fields, complete: false };
  }
  return { fields, complete: true };
}

/**
 * True when a WebSocket message id names a message inside a batch: it carries field 4,
 * batch_index. Unreadable ids count as not batched.
 */
export function isBatchedMessageId(messageId: MessageId): boolean {
  return messageIdFields(messageId).fields.has(4);
}

/** Where a message is stored in its topic: the ledger and the entry in it (a batch shares one entry). */
export interface MessagePosition {
  ledgerId: number;
  entryId: number;
}

/** The position of a WebSocket message id; null when the id is unreadable. */
export function messageIdPosition(messageId: MessageId): MessagePosition | null {
  const { fields, complete } = messageIdFields(messageId);
  const ledgerId = fields.get(1);
  const entryId = fields.get(2);
  return complete && ledgerId !== undefined && entryId !== undefined ? { ledgerId, entryId } : null;
}

/** Negative when `a` was stored before `b`, 0 for the same entry, positive after. */
export function comparePositions(a: MessagePosition, b: MessagePosition): number {
  return a.ledgerId !== b.ledgerId ? a.ledgerId - b.ledgerId : a.entryId - b.entryId;
}

export function encodeAckFrame(messageId: MessageId): string {
  return `{"messageId":${JSON.stringify(messageId)}}`;
}

export function encodeNackFrame(messageId: MessageId): string {
  return `{"type":"negativeAcknowledge","messageId":${JSON.stringify(messageId)}}`;
}

/** Makes a refused upgrade's Jetty HTML error page readable: the title, unescaped, or the errorMsg in it. */
export function describeUpgradeError(body: string): string {
  const title = /<title>([\s\S]*?)<\/title>/i.exec(body)?.[1];
  const text = (title ?? body)
    .replace(/&quot;/g, '"')
    .replace(/&#39;/g, "'")
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&amp;/g, '&')
    .replace(/\s+/g, ' ')
    .trim();
  const errorMsg = /"errorMsg":"((?:[^"\\]|\\.)*)"/.exec(text)?.[1];
  if (errorMsg) return errorMsg;
  return text.replace(/^Error \d+ /, '').slice(0, 500);
}
