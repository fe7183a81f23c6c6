import {
  fireId,
  formatFireId,
  MINUTE_MS,
  minuteOf,
  Parsed,
  parseFireId,
  parseMigrateRangeMessage,
  parseSliceMessage,
  parseTaskMessage,
  parseTaskPayload,
  MAX_TASKS_PER_MESSAGE,
  taskBatchOf,
  preparedWindows,
  SliceMessage,
  SUBSCRIPTION_INITIAL_POSITION,
  taskTopicOf,
  TOPICS,
  TOPOLOGY,
  windowOf,
} from '../index';

/** A parser's rejection, with a reason that names the problem. */
function expectRejected(parsed: Parsed<unknown>, problem: RegExp): void {
  expect(parsed).toEqual({ ok: false, reason: expect.stringMatching(problem) });
}

const SLICE: SliceMessage = { minute: 1_893_456_000_000, bucket: 2, buckets: 10, lockToken: 'tok' };
const H = 3_600_000;

describe('fire id', () => {
  it('builds the fire id of the callback header contract: <timerId>-<runAtMs>', () => {
    expect(fireId('42', 1_763_800_000_000)).toBe('42-1763800000000');
    expect(formatFireId({ timerId: '42', runAt: 1_763_800_000_000 })).toBe('42-1763800000000');
  });

  it('parses what it formats and refuses anything else', () => {
    expect(parseFireId('42-1763800000000')).toEqual({ timerId: '42', runAt: 1_763_800_000_000 });
    for (const bad of ['', '42', '-1', '42-', 'x-1', '42-1.5', '42-99999999999999999', '1-2-3']) expect(parseFireId(bad)).toBeNull();
  });
});

describe('topics', () => {
  it('keeps topic names unique and valid Pulsar local names', () => {
    const names = Object.values(TOPICS);
    expect(new Set(names).size).toBe(names.length);
    for (const n of names) expect(n).toMatch(/^[a-z0-9-]+$/);
  });

  it('names a subscription for every topic, so no message is published into no subscription', () => {
    expect(Object.keys(TOPOLOGY).sort()).toEqual(Object.values(TOPICS).sort());
    for (const subs of Object.values(TOPOLOGY)) expect(subs.length).toBeGreaterThan(0);
  });

  it('puts a fire already more than 5 s late on the catch-up lane, any other on timer-tasks', () => {
    expect(taskTopicOf(10_000, 10_000)).toBe(TOPICS.tasks);
    expect(taskTopicOf(10_000, 15_000)).toBe(TOPICS.tasks);
    expect(taskTopicOf(10_000, 15_001)).toBe(TOPICS.catchUp);
    expect(taskTopicOf(20_000, 15_000)).toBe(TOPICS.tasks);
  });

  it('starts new subscriptions at the earliest kept message', () => {
    expect(SUBSCRIPTION_INITIAL_POSITION).toBe('Earliest');
  });
});

describe('parseSliceMessage', () => {
  it('accepts a well-formed slice message and drops unknown fields', () => {
    expect(parseSliceMessage({ ...SLICE, extra: 1 })).toEqual({ ok: true, value: SLICE });
  });

  it.each([
    [null, /object/],
    [[SLICE], /object/],
    [{ ...SLICE, minute: SLICE.minute + 1 }, /minute/],
    [{ ...SLICE, minute: '1893456000000' }, /minute/],
    [{ ...SLICE, bucket: 10 }, /bucket/],
    [{ ...SLICE, bucket: -1 }, /bucket/],
    [{ ...SLICE, buckets: 0 }, /buckets/],
    [{ ...SLICE, lockToken: '' }, /lockToken/],
  ])('refuses %j', (data, problem) => {
    expectRejected(parseSliceMessage(data), problem);
  });
});

describe('parseTaskMessage', () => {
  it('derives the fire id from (timerId, runAt), whatever the payload says', () => {
    expect(parseTaskMessage({ timerId: '7', runAt: 1_000, attempt: 2, fireId: 'forged' })).toEqual({
      ok: true,
      value: { timerId: '7', runAt: 1_000, attempt: 2, fireId: '7-1000' },
    });
  });

  it('keeps a valid trace context and drops a malformed one without rejecting the fire', () => {
    const traceparent = '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01';
    expect(parseTaskMessage({ timerId: '7', runAt: 1_000, attempt: 1, traceparent })).toEqual({ ok: true, value: { timerId: '7', runAt: 1_000, attempt: 1, fireId: '7-1000', traceparent } });
    for (const bad of ['01-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', `00-${'0'.repeat(32)}-b7ad6b7169203331-01`, 'x', 7]) {
      expect(parseTaskMessage({ timerId: '7', runAt: 1_000, attempt: 1, traceparent: bad })).toEqual({ ok: true, value: { timerId: '7', runAt: 1_000, attempt: 1, fireId: '7-1000' } });
    }
    const batch = taskBatchOf([{ timerId: '7', runAt: 1_000, attempt: 1, fireId: '7-1000', traceparent }]);
    expect(batch).toEqual({ tasks: [{ timerId: '7', runAt: 1_000, attempt: 1, traceparent }] });
    expect(parseTaskPayload(batch)).toEqual({ ok: true, value: [{ timerId: '7', runAt: 1_000, attempt: 1, fireId: '7-1000', traceparent }] });
  });

  it('keeps the backfill mark only when true', () => {
    expect(parseTaskMessage({ timerId: '7', runAt: 1_000, attempt: 1, backfill: true })).toEqual({ ok: true, value: { timerId: '7', runAt: 1_000, attempt: 1, fireId: '7-1000', backfill: true } });
  });

  it.each([
    ['x', /object/],
    [{ timerId: 7, runAt: 1, attempt: 1 }, /timerId/],
    [{ timerId: '1'.repeat(21), runAt: 1, attempt: 1 }, /timerId/],
    [{ timerId: '7', runAt: 1.5, attempt: 1 }, /runAt/],
    [{ timerId: '7', runAt: 1, attempt: 0 }, /attempt/],
    [{ timerId: '7', runAt: 1, attempt: 1_001 }, /attempt/],
    [{ timerId: '7', runAt: 1, attempt: 1, backfill: 1 }, /backfill/],
  ])('refuses %j', (data, problem) => {
    expectRejected(parseTaskMessage(data), problem);
  });
});

describe('parseMigrateRangeMessage', () => {
  const RANGE = { windowStart: 0, windowEnd: H, fromTimerId: '0', toTimerId: '500' };

  it('accepts a bounded and an open-ended range', () => {
    expect(parseMigrateRangeMessage(RANGE)).toEqual({ ok: true, value: RANGE });
    expect(parseMigrateRangeMessage({ ...RANGE, toTimerId: '' })).toEqual({ ok: true, value: { ...RANGE, toTimerId: '' } });
  });

  it.each([
    [{ ...RANGE, windowEnd: 0 }, /window/],
    [{ ...RANGE, windowStart: -1 }, /window/],
    [{ ...RANGE, fromTimerId: 'a' }, /fromTimerId/],
    [{ ...RANGE, toTimerId: '5x' }, /toTimerId/],
    [{ ...RANGE, fromTimerId: '500' }, /empty range/],
  ])('refuses %j', (data, problem) => {
    expectRejected(parseMigrateRangeMessage(data), problem);
  });
});

describe('time', () => {
  it('aligns minutes and windows to UTC, half-open', () => {
    const hour = Date.parse('2026-01-15T10:00:00Z');
    expect(minuteOf(hour + MINUTE_MS - 1)).toBe(hour);
    expect(windowOf(hour, H)).toEqual({ start: hour, end: hour + H });
    expect(windowOf(hour + H - 1, H)).toEqual({ start: hour, end: hour + H });
    expect(windowOf(-1, H)).toEqual({ start: -H, end: 0 });
    expect(() => windowOf(0, 0)).toThrow(RangeError);
    expect(() => windowOf(0, 1.5)).toThrow(RangeError);
  });

  it('prepares the current window and the next two', () => {
    const hour = Date.parse('2026-01-15T10:00:00Z');
    const p = preparedWindows(hour + 5 * MINUTE_MS, H);
    expect(p.from).toBe(hour);
    expect(p.until).toBe(hour + 3 * H);
    expect(p.windows.map((w) => w.start)).toEqual([hour, hour + H, hour + 2 * H]);
  });
});

describe('parseTaskPayload', () => {
  it('reads one fire as a batch of one', () => {
    expect(parseTaskPayload({ timerId: '7', runAt: 1_000, attempt: 1 })).toEqual({ ok: true, value: [{ timerId: '7', runAt: 1_000, attempt: 1, fireId: '7-1000' }] });
  });

  it('reads a batch back from its wire form, fire ids derived', () => {
    const fires = [
      { timerId: '7', runAt: 1_000, attempt: 1, fireId: '7-1000' },
      { timerId: '8', runAt: 2_000, attempt: 3, fireId: '8-2000', backfill: true as const },
    ];
    const wire = JSON.parse(JSON.stringify(taskBatchOf(fires))) as unknown;
    expect(wire).toEqual({ tasks: [{ timerId: '7', runAt: 1_000, attempt: 1 }, { timerId: '8', runAt: 2_000, attempt: 3, backfill: true }] });
    expect(parseTaskPayload(wire)).toEqual({ ok: true, value: fires });
  });

  it('rejects a batch whole when one fire is bad, naming it', () => {
    const r = parseTaskPayload({ tasks: [{ timerId: '7', runAt: 1_000, attempt: 1 }, { timerId: '8', runAt: 'x', attempt: 1 }] });
    expect(r).toEqual({ ok: false, reason: expect.stringContaining('tasks[1]: bad runAt') });
  });

  it('rejects an empty, oversized or non-array batch', () => {
    expect(parseTaskPayload({ tasks: [] }).ok).toBe(false);
    expect(parseTaskPayload({ tasks: {} }).ok).toBe(false);
    const many = Array.from({ length: MAX_TASKS_PER_MESSAGE + 1 }, (_, i) => ({ timerId: '7', runAt: i, attempt: 1 }));
    expect(parseTaskPayload({ tasks: many }).ok).toBe(false);
    expect(parseTaskPayload([1]).ok).toBe(false);
  });
});
