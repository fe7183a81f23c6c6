import {
  comparePositions,
  decodeConsumerMessage,
  decodeProducerAck,
  describeUpgradeError,
  encodeAckFrame,
  encodeNackFrame,
  encodeSendFrame,
  isBatchedMessageId,
  messageIdPosition,
  parsePublishTime,
} from './ws-frames';

describe('WebSocket frames', () => {
  it('encodes a send as the proxy expects it: base64 payload, context, key, properties, delivery time', () => {
    const frame = encodeSendFrame(
      { payload: Buffer.from([0, 1, 254, 255]), key: 'k "quoted" ü', properties: { a: '1', 'b"': 'x\ny' }, deliverAt: 1700000000123.7 },
      '1z',
    );
    expect(JSON.parse(frame)).toEqual({
      payload: Buffer.from([0, 1, 254, 255]).toString('base64'),
      context: '1z',
      key: 'k "quoted" ü',
      properties: { a: '1', 'b"': 'x\ny' },
      deliverAt: 1700000000123,
    });
  });

  it('encodes string payloads as UTF-8 and leaves out absent or zero fields', () => {
    const parsed = JSON.parse(encodeSendFrame({ payload: 'héllo', deliverAfterMs: 0, deliverAt: 0 }, 'a')) as Record<string, unknown>;
    expect(Buffer.from(parsed.payload as string, 'base64').toString('utf8')).toBe('héllo');
    expect(Object.keys(parsed).sort()).toEqual(['context', 'payload']);
    expect(JSON.parse(encodeSendFrame({ payload: '', deliverAfterMs: 1500 }, 'b'))).toMatchObject({ deliverAfterMs: 1500 });
  });

  it('decodes send answers, success and failure', () => {
    expect(decodeProducerAck('{"result":"ok","messageId":"CAkQADAA","context":"c1","errorCode":0,"schemaVersion":0}')).toEqual({
      result: 'ok',
      messageId: 'CAkQADAA',
      context: 'c1',
      errorMsg: undefined,
    });
    expect(decodeProducerAck('{"result":"send-error:7","errorMsg":"Invalid Base64","context":"c3"}')).toMatchObject({
      result: 'send-error:7',
      errorMsg: 'Invalid Base64',
      context: 'c3',
    });
    expect(decodeProducerAck('{"endOfTopic":true}')).toBeUndefined();
    expect(() => decodeProducerAck('not json')).toThrow();
  });

  it('decodes pushed messages and their publish time', () => {
    const frame = decodeConsumerMessage(
      '{"messageId":"CAcQADAA","payload":"aGVsbG8=","properties":{"a":"1"},"publishTime":"2026-11-22T12:30:31.107Z","redeliveryCount":2,"key":"k1"}',
    );
    expect(frame).toMatchObject({ messageId: 'CAcQADAA', payload: 'aGVsbG8=', redeliveryCount: 2, key: 'k1' });
    expect(parsePublishTime(frame?.publishTime)).toBe(Date.UTC(2026, 10, 22, 12, 30, 31, 107));
    expect(parsePublishTime('2021-10-29T16:01:38.967-07:00')).toBe(Date.UTC(2021, 9, 29, 23, 1, 38, 967));
    expect(parsePublishTime(undefined)).toBe(0);
    expect(parsePublishTime('garbage')).toBe(0);
    expect(decodeConsumerMessage('{"endOfTopic":"true"}')).toBeUndefined();
  });

  it('encodes ack and negative ack', () => {
    expect(JSON.parse(encodeAckFrame('CAcQADAA'))).toEqual({ messageId: 'CAcQADAA' });
    expect(JSON.parse(encodeNackFrame('CAcQADAA'))).toEqual({ type: 'negativeAcknowledge', messageId: 'CAcQADAA' });
  });

  it('reads ledger and entry of a message id, and whether it names a message in a batch', () => {
    // Ids as the proxy sent them for entries 0 and 3 of ledger 350 (field 6, batch_size, is 0).
    expect(messageIdPosition('CN4CEAAwAA==')).toEqual({ ledgerId: 350, entryId: 0 });
    expect(messageIdPosition('CN4CEAMwAA==')).toEqual({ ledgerId: 350, entryId: 3 });
    expect(isBatchedMessageId('CN4CEAMwAA==')).toBe(false);
    const batched = Buffer.from([0x08, 0x09, 0x10, 0x03, 0x20, 0x02]).toString('base64');
    expect(messageIdPosition(batched)).toEqual({ ledgerId: 9, entryId: 3 });
    expect(isBatchedMessageId(batched)).toBe(true);
    expect(messageIdPosition(Buffer.from([0x08, 0xde]).toString('base64'))).toBeNull();
    expect(messageIdPosition('')).toBeNull();
    expect(isBatchedMessageId('garbage')).toBe(false);
  });

  it('orders positions by ledger, then entry', () => {
    expect(comparePositions({ ledgerId: 350, entryId: 3 }, { ledgerId: 350, entryId: 2 })).toBeGreaterThan(0);
    expect(comparePositions({ ledgerId: 350, entryId: 3 }, { ledgerId: 352, entryId: -1 })).toBeLessThan(0);
    expect(comparePositions({ ledgerId: 7, entryId: 1 }, { ledgerId: 7, entryId: 1 })).toBe(0);
    expect(comparePositions({ ledgerId: 0, entryId: 0 }, { ledgerId: -1, entryId: -1 })).toBeGreaterThan(0);
  });

  it('turns the proxy HTML error page into its message', () => {
    const page =
      '<html>\n<head>\n<title>Error 409 Failed to create producer/consumer: {&quot;errorMsg&quot;:&quot;Exclusive consumer is already connected&quot;,&quot;reqId&quot;:1}</title>\n</head><body>x</body></html>';
    expect(describeUpgradeError(page)).toBe('Exclusive consumer is already connected');
    expect(describeUpgradeError('<html><title>Error 400 Invalid query params: Ack timeout should be greater than 1000 ms</title></html>')).toBe(
      'Invalid query params: Ack timeout should be greater than 1000 ms',
    );
    expect(describeUpgradeError('plain text')).toBe('plain text');
  });
});
