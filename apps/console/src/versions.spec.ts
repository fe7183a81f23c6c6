import type { TimerVersion } from '@timer/client';
import { definitionOf, diffVersions } from './versions';

const v1: TimerVersion = {
  version: 1,
  change: 'create',
  changedAt: 1_767_225_600_000,
  name: 'report',
  cron: '0 9 * * 1-5',
  runAt: null,
  every: null,
  timeZone: 'Europe/Berlin',
  dstGap: 'shift',
  dstOverlap: 'first',
  startAt: null,
  endAt: null,
  maxFires: null,
  notifyHTTPParam: { url: 'https://example.com/hook', method: 'POST' },
  status: 1,
  retryPolicy: { maxAttempts: 3, backoffMs: 1000 },
  misfirePolicy: 'fire_late',
  overlapPolicy: 'allow',
  catchupPolicy: null,
  catchupWindowMs: null,
  jitterMs: 0,
  autoSpread: false,
  spreadOffsetMs: null,
  failureWebhook: null,
  resultWebhook: null,
  calendars: [],
  onExcluded: 'skip',
};

describe('timer versions', () => {
  it('lists the fields two versions differ in, in the order of the definition', () => {
    const v2: TimerVersion = { ...v1, version: 2, change: 'patch', notifyHTTPParam: { ...v1.notifyHTTPParam, header: { 'X-Team': ['a'] } }, retryPolicy: { maxAttempts: 5, backoffMs: 1000 } };
    expect(diffVersions(v1, v2)).toEqual([
      { field: 'Headers', before: '', after: 'X-Team: a' },
      { field: 'Max attempts', before: '3', after: '5' },
    ]);
    expect(diffVersions(v2, v2)).toEqual([]);
  });

  it('restores a definition without the fields a PUT does not take and without empty ones', () => {
    expect(definitionOf(v1)).toEqual({
      name: 'report',
      cron: '0 9 * * 1-5',
      dstGap: 'shift',
      dstOverlap: 'first',
      timeZone: 'Europe/Berlin',
      notifyHTTPParam: { url: 'https://example.com/hook', method: 'POST' },
      retryPolicy: { maxAttempts: 3, backoffMs: 1000 },
      misfirePolicy: 'fire_late',
      overlapPolicy: 'allow',
      jitterMs: 0,
      autoSpread: false,
    });
  });
});

describe('timer versions with calendars and a result webhook', () => {
  it('compares and restores them where the versions carry them', () => {
    const withCal = { ...v1, calendars: ['de-holidays'], onExcluded: 'nextBusinessDay', resultWebhook: { url: 'https://example.com/answers' } } as TimerVersion;
    const without = { ...withCal, version: 2, calendars: [], onExcluded: 'skip', resultWebhook: null } as TimerVersion;
    expect(diffVersions(withCal, without)).toEqual([
      { field: 'Calendars', before: 'de-holidays', after: '' },
      { field: 'On an excluded day', before: 'nextBusinessDay', after: 'skip' },
      { field: 'Result webhook', before: 'https://example.com/answers', after: '' },
    ]);
    expect(definitionOf(withCal)).toMatchObject({ calendars: ['de-holidays'], onExcluded: 'nextBusinessDay', resultWebhook: { url: 'https://example.com/answers' } });
    expect(definitionOf(without)).not.toHaveProperty('resultWebhook');
    expect(definitionOf(without)).not.toHaveProperty('calendars');
  });
});
