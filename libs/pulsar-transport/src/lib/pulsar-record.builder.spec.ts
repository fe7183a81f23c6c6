import { PulsarRecord, PulsarRecordBuilder } from './pulsar-record.builder';
import { PulsarSerializer } from './pulsar.serializer';

describe('PulsarRecordBuilder', () => {
  it('builds a record with data and options', () => {
    const record = new PulsarRecordBuilder<{ id: number }>()
      .setData({ id: 1 })
      .setKey('k')
      .setProperty('a', '1')
      .setProperty('b', '2')
      .setDeliverAfter(100)
      .build();
    expect(record).toBeInstanceOf(PulsarRecord);
    expect(record.data).toEqual({ id: 1 });
    expect(record.options).toEqual({ key: 'k', properties: { a: '1', b: '2' }, deliverAfterMs: 100 });
  });

  it('keeps one of deliverAt / deliverAfter, the last set', () => {
    expect(new PulsarRecordBuilder(1).setDeliverAfter(5).setDeliverAt(10).build().options).toEqual({ deliverAt: 10 });
    expect(new PulsarRecordBuilder(1).setDeliverAt(10).setDeliverAfter(5).build().options).toEqual({ deliverAfterMs: 5 });
  });

  it('setProperties replaces, setOptions merges', () => {
    const record = new PulsarRecordBuilder(1)
      .setProperty('a', '1')
      .setProperties({ b: '2' })
      .setOptions({ key: 'x' })
      .build();
    expect(record.options).toEqual({ properties: { b: '2' }, key: 'x' });
  });

  it('builds independent records', () => {
    const builder = new PulsarRecordBuilder(1).setKey('a');
    const first = builder.build();
    builder.setKey('b');
    expect(first.options?.key).toBe('a');
  });

  it('requires data', () => {
    expect(() => new PulsarRecordBuilder().build()).toThrow(/data is required/);
  });
});

describe('PulsarSerializer', () => {
  const serializer = new PulsarSerializer();

  it('serializes plain data as JSON', () => {
    expect(serializer.serialize({ pattern: 'p', data: { a: 1 } })).toEqual({ payload: '{"a":1}' });
    expect(serializer.serialize({ pattern: 'p', data: '123' })).toEqual({ payload: '"123"' });
  });

  it('maps record options', () => {
    const at = new Date(1_900_000_000_000);
    const record = new PulsarRecordBuilder([1]).setKey('k').setProperties({ a: 'b' }).setDeliverAt(at).build();
    expect(serializer.serialize({ pattern: 'p', data: record })).toEqual({
      payload: '[1]',
      key: 'k',
      properties: { a: 'b' },
      deliverAt: 1_900_000_000_000,
    });
  });

  it('rejects non-string properties and bad delivery times', () => {
    const bad = new PulsarRecord(1, { properties: { n: 1 as unknown as string } });
    expect(() => serializer.serialize({ pattern: 'p', data: bad })).toThrow(/property "n"/);
    expect(() => serializer.serialize({ pattern: 'p', data: new PulsarRecord(1, { deliverAt: NaN }) })).toThrow(/deliverAt/);
  });
});
