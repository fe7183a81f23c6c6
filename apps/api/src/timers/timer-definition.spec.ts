import { createHash } from 'crypto';
import { TimerFields } from '@timer/dal';
import { ApiError } from '../common/errors';
import { CreateTimerDto } from './dto/create-timer.dto';
import { PatchTimerDto } from './dto/edit-timer.dto';
import { canonicalJson, checkDefinition, fieldsOf, patchedFields, requestHash, resolveSchedule, sameFields, scheduleChanged, spreadCarried, spreadChanged, spreadOf } from './timer-definition';

const NOW = Date.UTC(2030, 0, 1);
const RULES = { now: NOW, allowPrivateCallbacks: false, callbackBodyMaxBytes: 16, callbackTimeoutMaxMs: 30_000 };
const stored: TimerFields = {
  name: 'report',
  cron: '0 */5 * * * *',
  runAt: null,
  everyMs: null,
  timeZone: 'Europe/Berlin',
  dstGap: 'shift',
  dstOverlap: 'first',
  startAt: null,
  endAt: null,
  maxFires: null,
  finalAt: null,
  notifyHttpParam: { url: 'https://a.example/hook', method: 'POST', header: { 'X-A': ['1'] }, body: '{}' },
  maxAttempts: 5,
  backoffMs: 2000,
  misfirePolicy: 'skip',
  overlapPolicy: 'allow',
  catchupPolicy: null,
  catchupWindowMs: null,
  jitterMs: 0,
  failureWebhook: null,
};
const patch = (over: Partial<PatchTimerDto>) => ({ id: '1', app: 'a', version: 1, ...over }) as PatchTimerDto;

function refusal(fn: () => void): string {
  try {
    fn();
  } catch (e) {
    if (e instanceof ApiError) return `${e.status} ${e.message}`;
    throw e;
  }
  return 'accepted';
}

describe('fieldsOf (create, PUT)', () => {
  it('fills in the defaults of what the request leaves out, and normalises single header values', () => {
    const dto = { app: 'a', name: 'n', cron: '* * * * *', notifyHTTPParam: { url: 'https://h/', method: 'GET', header: { 'X-One': 'v' } } } as unknown as CreateTimerDto;
    expect(fieldsOf(dto)).toEqual({
      name: 'n',
      cron: '* * * * *',
      runAt: null,
      everyMs: null,
      timeZone: 'UTC',
      dstGap: 'shift',
      dstOverlap: 'first',
      startAt: null,
      endAt: null,
      maxFires: null,
      finalAt: null,
      notifyHttpParam: { url: 'https://h/', method: 'GET', header: { 'X-One': ['v'] } },
      maxAttempts: 3,
      backoffMs: 1000,
      misfirePolicy: 'fire_late',
      overlapPolicy: 'allow',
      catchupPolicy: null,
      catchupWindowMs: null,
      jitterMs: 0,
      failureWebhook: null,
      resultWebhook: null,
      autoSpread: false,
      spreadOffsetMs: null,
      calendars: null,
      onExcluded: 'skip',
    });
  });

  it('takes calendars and onExcluded; an edit of either changes the schedule, the hash ignores their defaults', () => {
    const base = { app: 'a', name: 'n', cron: '0 9 * * 1-5', notifyHTTPParam: { url: 'https://h/', method: 'GET' } };
    const plain = fieldsOf(base as unknown as CreateTimerDto);
    const withCalendar = fieldsOf({ ...base, calendars: ['de'], onExcluded: 'nextBusinessDay' } as unknown as CreateTimerDto);
    expect(withCalendar).toMatchObject({ calendars: ['de'], onExcluded: 'nextBusinessDay' });
    expect(scheduleChanged(plain, withCalendar)).toBe(true);
    expect(scheduleChanged(withCalendar, { ...withCalendar, calendarRules: [] })).toBe(false);
    expect(requestHash('a', plain)).toBe(requestHash('a', fieldsOf({ ...base, calendars: [], onExcluded: 'skip' } as unknown as CreateTimerDto)));
  });

  it('takes autoSpread from the request, never the spread offset; the hash ignores the offset and an autoSpread left off', () => {
    const dto = { app: 'a', name: 'n', cron: '* * * * *', jitterMs: 5_000, autoSpread: true, notifyHTTPParam: { url: 'https://h/', method: 'GET' } } as unknown as CreateTimerDto;
    expect(fieldsOf(dto)).toMatchObject({ autoSpread: true, spreadOffsetMs: null, jitterMs: 5_000 });
    expect(requestHash('a', { ...stored, autoSpread: false, spreadOffsetMs: null })).toBe(requestHash('a', stored));
    expect(requestHash('a', { ...stored, autoSpread: true, spreadOffsetMs: 2_000 })).toBe(requestHash('a', { ...stored, autoSpread: true }));
    expect(requestHash('a', { ...stored, autoSpread: true })).not.toBe(requestHash('a', stored));
  });

  it("stores a failureWebhook with its header values as lists; the hash of a create without one is the one it had before the field", () => {
    const dto = { app: 'a', name: 'n', cron: '* * * * *', notifyHTTPParam: { url: 'https://h/', method: 'GET' }, failureWebhook: { url: 'https://hooks.example/f', headers: { Authorization: 'Bearer x' } } } as unknown as CreateTimerDto;
    expect(fieldsOf(dto).failureWebhook).toEqual({ url: 'https://hooks.example/f', headers: { Authorization: ['Bearer x'] } });
    const { failureWebhook: _none, ...before } = stored;
    expect(requestHash('a', stored)).toBe(createHash('sha256').update(canonicalJson({ app: 'a', ...before })).digest('hex'));
    expect(requestHash('a', { ...stored, failureWebhook: { url: 'https://hooks.example/f' } })).not.toBe(requestHash('a', stored));
  });
});

describe('patchedFields (PATCH)', () => {
  it('autoSpread: set when given; an edit keeps the stored offset while autoSpread stays on, and says when admission must choose again', () => {
    const spread = { ...stored, jitterMs: 5_000, autoSpread: true, spreadOffsetMs: 3_000 };
    expect(patchedFields(stored, patch({ autoSpread: true, jitterMs: 5_000 }))).toEqual({ ...stored, autoSpread: true, jitterMs: 5_000 });
    // The URL changes: same offset, nothing to admit again.
    const renamed = spreadCarried(spread, patchedFields(spread, patch({ name: 'x' })));
    expect(renamed).toEqual({ ...spread, name: 'x' });
    expect(spreadChanged(spread, renamed)).toBe(false);
    // A PUT gives no offset: the stored one is carried.
    expect(spreadCarried(spread, { ...spread, spreadOffsetMs: null }).spreadOffsetMs).toBe(3_000);
    // Turned on: 0 until admission says otherwise; turned off: none; the jitter changed: admitted again.
    expect(spreadCarried(stored, { ...stored, jitterMs: 5_000, autoSpread: true }).spreadOffsetMs).toBe(0);
    expect(spreadCarried(spread, patchedFields(spread, patch({ autoSpread: false }))).spreadOffsetMs).toBeNull();
    expect(spreadChanged(stored, { ...stored, jitterMs: 5_000, autoSpread: true })).toBe(true);
    expect(spreadChanged(spread, { ...spread, autoSpread: false })).toBe(true);
    expect(spreadChanged(spread, { ...spread, jitterMs: 4_000 })).toBe(true);
    expect(spreadChanged(stored, { ...stored, jitterMs: 4_000 })).toBe(false);
    expect(spreadOf(spread)).toEqual({ jitterMs: 5_000 });
    expect(spreadOf(stored)).toBeUndefined();
  });

  it('replaces failureWebhook whole when given and removes it with null', () => {
    const hook = { url: 'https://hooks.example/t', headers: { 'X-K': 'v' } };
    const withHook = patchedFields(stored, patch({ failureWebhook: hook }));
    expect(withHook).toEqual({ ...stored, failureWebhook: { url: hook.url, headers: { 'X-K': ['v'] } } });
    expect(patchedFields(withHook, patch({ name: 'x' })).failureWebhook).toEqual(withHook.failureWebhook);
    expect(patchedFields(withHook, patch({ failureWebhook: null }))).toEqual(stored);
  });

  it('replaces resultWebhook whole when given and removes it with null; the hash of a request without one is unchanged', () => {
    const hook = { url: 'https://hooks.example/r', headers: { 'X-K': 'v' } };
    const withHook = patchedFields(stored, patch({ resultWebhook: hook }));
    expect(withHook).toEqual({ ...stored, resultWebhook: { url: hook.url, headers: { 'X-K': ['v'] } } });
    expect(patchedFields(withHook, patch({ name: 'x' })).resultWebhook).toEqual(withHook.resultWebhook);
    expect(patchedFields(withHook, patch({ resultWebhook: null })).resultWebhook).toBeNull();
    expect(requestHash('a', { ...stored, resultWebhook: null })).toBe(requestHash('a', stored));
    expect(requestHash('a', withHook)).not.toBe(requestHash('a', stored));
  });

  it('changes only the fields given', () => {
    expect(patchedFields(stored, patch({ name: 'renamed' }))).toEqual({ ...stored, name: 'renamed' });
    expect(patchedFields(stored, patch({ timeZone: 'UTC' }))).toEqual({ ...stored, timeZone: 'UTC' });
    expect(patchedFields(stored, patch({}))).toEqual(stored);
  });

  it('sets the fire policies given; catchupPolicy or catchupWindowMs null restores the default', () => {
    const policies = { overlapPolicy: 'buffer_one', catchupPolicy: 'latest', catchupWindowMs: 60_000, jitterMs: 500 } as const;
    const withPolicies = patchedFields(stored, patch(policies));
    expect(withPolicies).toEqual({ ...stored, ...policies });
    expect(patchedFields(withPolicies, patch({ catchupPolicy: null, catchupWindowMs: null } as unknown as Partial<PatchTimerDto>))).toEqual({
      ...withPolicies,
      catchupPolicy: null,
      catchupWindowMs: null,
    });
    expect(patchedFields(withPolicies, patch({ overlapPolicy: null, jitterMs: null } as unknown as Partial<PatchTimerDto>))).toEqual(withPolicies);
  });

  it('replaces the schedule when cron or runAt is given', () => {
    expect(patchedFields(stored, patch({ runAt: NOW + 1 }))).toMatchObject({ cron: null, runAt: NOW + 1, timeZone: 'Europe/Berlin' });
    expect(patchedFields({ ...stored, cron: null, runAt: NOW + 1 }, patch({ cron: '* * * * *' }))).toMatchObject({ cron: '* * * * *', runAt: null });
    // Both given: kept both, so the schedule check refuses it, naming runAt.
    const both = patchedFields(stored, patch({ cron: '* * * * *', runAt: NOW + 1 }));
    expect(refusal(() => checkDefinition(both, RULES, true))).toBe('400 runAt: give either cron or runAt, not both');
  });

  it('patches notifyHTTPParam and retryPolicy field by field; header or body null removes them', () => {
    const p = patchedFields(stored, patch({ notifyHTTPParam: { url: 'https://b.example/' }, retryPolicy: { backoffMs: 500 } } as Partial<PatchTimerDto>));
    expect(p.notifyHttpParam).toEqual({ ...stored.notifyHttpParam, url: 'https://b.example/' });
    expect(p).toMatchObject({ maxAttempts: 5, backoffMs: 500 });
    const removed = patchedFields(stored, patch({ notifyHTTPParam: { header: null, body: null } } as unknown as Partial<PatchTimerDto>));
    expect(removed.notifyHttpParam).toEqual({ url: 'https://a.example/hook', method: 'POST' });
    // The stored definition is not changed in place.
    expect(stored.notifyHttpParam.header).toEqual({ 'X-A': ['1'] });
  });
});

describe('checkDefinition', () => {
  it.each([
    ['an unknown zone', { timeZone: 'Mars/Base' }, true, /^400 timeZone: unknown time zone/],
    ['a cron that never fires', { cron: '0 0 30 2 *' }, true, /^400 cron/],
    ['a runAt in the past', { cron: null, runAt: NOW - 1 }, true, /^400 runAt .* is not in the future/],
    ['a private callback host', { notifyHttpParam: { url: 'http://10.0.0.1/', method: 'POST' } }, true, /^400 notifyHTTPParam\.url points to a loopback or private address/],
    ['a body over the limit', { notifyHttpParam: { url: 'https://h/', method: 'POST', body: 'x'.repeat(17) } }, true, /^400 notifyHTTPParam\.body is larger than 16 bytes/],
    ['a private failure webhook host', { failureWebhook: { url: 'http://127.0.0.1:9/f' } }, true, /^400 failureWebhook\.url points to a loopback or private address/],
    ['a private result webhook host', { resultWebhook: { url: 'http://[::1]:9/r' } }, true, /^400 resultWebhook\.url points to a loopback or private address/],
    ['autoSpread without jitterMs', { autoSpread: true, jitterMs: 0 }, false, /^400 autoSpread needs jitterMs > 0/],
  ])('refuses %s, naming the field', (_why, over, runAtGiven, message) => {
    expect(refusal(() => checkDefinition({ ...stored, ...over } as TimerFields, RULES, runAtGiven))).toMatch(message);
  });

  it('leaves a past one-shot time alone when the request did not give it (a PATCH of the URL)', () => {
    expect(refusal(() => checkDefinition({ ...stored, cron: null, runAt: NOW - 1 }, RULES, false))).toBe('accepted');
  });
});

describe('comparing definitions', () => {
  it('is blind to key order, and tells a schedule change from a callback change', () => {
    const reordered = { ...stored, notifyHttpParam: { body: '{}', header: { 'X-A': ['1'] }, method: 'POST', url: 'https://a.example/hook' } };
    expect(sameFields(stored, reordered)).toBe(true);
    expect(requestHash('a', stored)).toBe(requestHash('a', reordered));
    expect(requestHash('a', stored)).not.toBe(requestHash('b', stored));
    expect(requestHash('a', stored)).toMatch(/^[0-9a-f]{64}$/);
    expect(scheduleChanged(stored, { ...stored, notifyHttpParam: { url: 'https://x/', method: 'GET' } })).toBe(false);
    expect(scheduleChanged(stored, { ...stored, timeZone: 'UTC' })).toBe(true);
    expect(canonicalJson({ b: 1, a: [{ d: null, c: undefined }] })).toBe('{"a":[{"d":null}],"b":1}');
  });
});

describe('bounds and intervals', () => {
  const S = 1_000;
  const every = (over: Partial<TimerFields> = {}): TimerFields => ({ ...stored, cron: null, everyMs: 90 * S, ...over });
  const check = (f: TimerFields, now = NOW, given = true) => refusal(() => checkDefinition(resolveSchedule(f, now), { ...RULES, now }, given));

  it('anchors an interval without startAt at the write, rounded up to the whole second, and keeps a given anchor', () => {
    expect(resolveSchedule(every(), NOW + 1).startAt).toBe(NOW + S);
    expect(resolveSchedule(every(), NOW).startAt).toBe(NOW);
    expect(resolveSchedule(every({ startAt: NOW - 7 }), NOW + 1).startAt).toBe(NOW - 7);
    expect(resolveSchedule(every(), NOW).finalAt).toBeNull();
  });

  it('derives the final instant: a one-shot\'s runAt, the maxFires-th fire from startAt (else from the write), capped by endAt', () => {
    expect(resolveSchedule({ ...stored, cron: null, runAt: NOW + 5 }, NOW).finalAt).toBe(NOW + 5);
    expect(resolveSchedule(every({ startAt: NOW, maxFires: 3 }), NOW).finalAt).toBe(NOW + 180 * S);
    expect(resolveSchedule(every({ startAt: NOW, maxFires: 3, endAt: NOW + 100 * S }), NOW).finalAt).toBe(NOW + 100 * S);
    // Every 5 minutes in Berlin, counted from the write (NOW is a whole hour).
    expect(resolveSchedule({ ...stored, maxFires: 2 }, NOW + 1).finalAt).toBe(NOW + 10 * 60 * S);
    expect(resolveSchedule({ ...stored, endAt: NOW + 3 }, NOW).finalAt).toBe(NOW + 3);
  });

  it('keeps the stored final instant when the schedule inputs are unchanged (a repeated PUT keeps its count)', () => {
    const first = resolveSchedule({ ...stored, maxFires: 2 }, NOW + 1);
    expect(resolveSchedule({ ...stored, maxFires: 2 }, NOW + 3_600_000, first).finalAt).toBe(first.finalAt);
    expect(resolveSchedule({ ...stored, maxFires: 3 }, NOW + 3_600_000, first).finalAt).toBe(NOW + 3_600_000 + 10 * 60 * S);
  });

  it.each([
    ['both cron and every', { ...stored, everyMs: 5 * S }, /^400 every: give exactly one of cron, runAt and every/],
    ['both runAt and every', every({ runAt: NOW + S }), /^400 every: give exactly one of cron, runAt and every/],
    ['endAt before startAt', every({ startAt: NOW + 10 * S, endAt: NOW + 5 * S }), /^400 endAt: endAt .* must be after startAt/],
    ['endAt equal to startAt', every({ startAt: NOW + 10 * S, endAt: NOW + 10 * S }), /^400 endAt: endAt .* must be after startAt/],
    ['endAt in the past', every({ startAt: NOW - 10 * S, endAt: NOW - 5 * S }), /^400 endAt .* has passed/],
    ['no instant in [startAt, endAt]', { ...stored, startAt: NOW + 60 * S, endAt: NOW + 120 * S }, /^400 endAt: no fire of the schedule lies in/],
    ['every fire counted before now', every({ startAt: NOW - 3_600_000, maxFires: 3 }), /^400 maxFires: the 3 fires counted from startAt/],
    ['maxFires on a one-shot', { ...stored, cron: null, runAt: NOW + S, maxFires: 1 }, /^400 maxFires is only for cron and every timers/],
    ['startAt on a one-shot', { ...stored, cron: null, runAt: NOW + S, startAt: NOW }, /^400 startAt: startAt is only for cron and every timers/],
    ['endAt on a one-shot', { ...stored, cron: null, runAt: NOW + S, endAt: NOW + 2 * S }, /^400 endAt: endAt is only for cron and every timers/],
    ['more cron fires than can be counted', { ...stored, maxFires: 1_001 }, /^400 maxFires: maxFires must be an integer from 1 to 1000 for a cron timer/],
  ])('refuses %s, naming the field', (_why, f, message) => {
    expect(check(f)).toMatch(message);
  });

  it('accepts bounds that leave a fire, an endAt exactly on a fire (inclusive), and a finished timer on a PATCH that does not touch its schedule', () => {
    expect(check(every({ startAt: NOW - 89 * S, endAt: NOW + S }))).toBe('accepted');
    expect(check({ ...stored, startAt: NOW + 5 * 60 * S, endAt: NOW + 5 * 60 * S + 1 })).toBe('accepted');
    expect(check({ ...stored, startAt: NOW + 1, endAt: NOW + 5 * 60 * S })).toBe('accepted');
    expect(check(every({ startAt: NOW - 10 * S, endAt: NOW - 5 * S }), NOW, false)).toBe('accepted');
    expect(check(every({ startAt: NOW, maxFires: 1_000_000 }))).toBe('accepted');
  });

  it('PATCH: every replaces the schedule kind and keeps the stored anchor; runAt drops the bounds; null removes a bound', () => {
    const bounded = { ...stored, startAt: NOW, endAt: NOW + 3_600_000, maxFires: 5 };
    expect(patchedFields(bounded, patch({ every: '1h30m' }))).toMatchObject({ cron: null, runAt: null, everyMs: 5_400_000, startAt: NOW, endAt: NOW + 3_600_000 });
    expect(patchedFields(bounded, patch({ runAt: NOW + 9 }))).toMatchObject({ cron: null, runAt: NOW + 9, everyMs: null, startAt: null, endAt: null, maxFires: null });
    expect(patchedFields(bounded, patch({ endAt: null, maxFires: 7 } as unknown as Partial<PatchTimerDto>))).toMatchObject({ startAt: NOW, endAt: null, maxFires: 7 });
    expect(patchedFields(every({ startAt: NOW }), patch({ cron: '* * * * *' }))).toMatchObject({ cron: '* * * * *', everyMs: null, startAt: NOW });
  });

  it('sees a change of the interval or of a bound as a schedule change', () => {
    expect(scheduleChanged(every(), every({ everyMs: 60 * S }))).toBe(true);
    expect(scheduleChanged(stored, { ...stored, endAt: NOW })).toBe(true);
    expect(scheduleChanged(stored, { ...stored, maxFires: 3 })).toBe(true);
    expect(scheduleChanged(stored, { ...stored, name: 'x' })).toBe(false);
  });
});

describe('DST choices (dstGap, dstOverlap)', () => {
  it('are patched like the other fields, change the schedule, and are dropped with a schedule that is not a cron', () => {
    const p = patchedFields(stored, patch({ dstGap: 'skip', dstOverlap: 'both' }));
    expect(p).toMatchObject({ dstGap: 'skip', dstOverlap: 'both' });
    expect(scheduleChanged(stored, p)).toBe(true);
    expect(patchedFields(p, patch({ every: '1m' }))).toMatchObject({ everyMs: 60_000, dstGap: 'shift', dstOverlap: 'first' });
    expect(patchedFields(p, patch({ name: 'other' }))).toMatchObject({ dstGap: 'skip', dstOverlap: 'both' });
  });

  it('refuses a non-default choice on a one-shot or an interval, naming the field', () => {
    expect(refusal(() => checkDefinition({ ...stored, cron: null, runAt: NOW + 1, dstGap: 'skip' }, RULES, true))).toMatch(/^400 dstGap: /);
    expect(refusal(() => checkDefinition({ ...stored, cron: null, everyMs: 60_000, startAt: NOW, dstOverlap: 'both' }, RULES, true))).toMatch(/^400 dstOverlap: /);
    expect(refusal(() => checkDefinition({ ...stored, dstGap: 'skip', dstOverlap: 'both' }, RULES, true))).toBe('accepted');
  });
});
