import { TimerFields } from '@timer/dal';
import { ApiError } from '../common/errors';
import { CreateTimerDto } from './dto/create-timer.dto';
import { PatchTimerDto } from './dto/edit-timer.dto';
import { canonicalJson, checkDefinition, fieldsOf, patchedFields, requestHash, sameFields, scheduleChanged } from './timer-definition';

const NOW = Date.UTC(2030, 0, 1);
const RULES = { now: NOW, allowPrivateCallbacks: false, callbackBodyMaxBytes: 16 };
const stored: TimerFields = {
  name: 'report',
  cron: '0 */5 * * * *',
  runAt: null,
  timeZone: 'Europe/Berlin',
  notifyHttpParam: { url: 'https://a.example/hook', method: 'POST', header: { 'X-A': ['1'] }, body: '{}' },
  maxAttempts: 5,
  backoffMs: 2000,
  misfirePolicy: 'skip',
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
      timeZone: 'UTC',
      notifyHttpParam: { url: 'https://h/', method: 'GET', header: { 'X-One': ['v'] } },
      maxAttempts: 3,
      backoffMs: 1000,
      misfirePolicy: 'fire_late',
    });
  });
});

describe('patchedFields (PATCH)', () => {
  it('changes only the fields given', () => {
    expect(patchedFields(stored, patch({ name: 'renamed' }))).toEqual({ ...stored, name: 'renamed' });
    expect(patchedFields(stored, patch({ timeZone: 'UTC' }))).toEqual({ ...stored, timeZone: 'UTC' });
    expect(patchedFields(stored, patch({}))).toEqual(stored);
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
