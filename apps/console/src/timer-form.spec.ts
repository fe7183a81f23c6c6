import { createInput, emptyValues, headerLines, headerMap, patchInput } from './timer-values';

describe('timer form values', () => {
  it('reads headers one "Name: value" a line, a repeated name as several values, and writes them back', () => {
    const map = headerMap('Authorization: Bearer x\nX-Team: a\n\nX-Team: b\nbroken line');
    expect(map).toEqual({ Authorization: ['Bearer x'], 'X-Team': ['a', 'b'], 'broken line': [''] });
    expect(headerLines({ 'X-Team': ['a', 'b'] })).toBe('X-Team: a\nX-Team: b');
    expect(headerMap(' \n')).toBeUndefined();
  });

  it('creates with the fields given and only the policies that differ from the defaults', () => {
    const v = { ...emptyValues(), name: 'n', url: 'https://example.com/hook', timeZone: 'UTC', headers: 'X-A: 1', maxAttempts: '5', jitterMs: '250' };
    expect(createInput(v)).toEqual({
      name: 'n',
      cron: '0 * * * * *',
      timeZone: 'UTC',
      notifyHTTPParam: { url: 'https://example.com/hook', method: 'POST', header: { 'X-A': ['1'] } },
      retryPolicy: { maxAttempts: 5 },
      jitterMs: 250,
    });
    // Not a number: sent as typed, so the API's message names the field.
    expect(createInput({ ...v, maxAttempts: 'lots' }).retryPolicy).toEqual({ maxAttempts: 'lots' });
  });

  it('patches only what changed: headers replaced whole or removed, retries field by field, cleared bounds null', () => {
    const before = { ...emptyValues(), name: 'n', url: 'https://example.com/hook', headers: 'X-A: 1', maxFires: '10', failureWebhookUrl: 'https://example.com/dead' };
    expect(patchInput(before, before)).toEqual({});
    expect(patchInput(before, { ...before, headers: 'X-A: 2\nX-B: 3', backoffMs: '5000' })).toEqual({
      notifyHTTPParam: { header: { 'X-A': ['2'], 'X-B': ['3'] } },
      retryPolicy: { backoffMs: 5000 },
    });
    expect(patchInput(before, { ...before, headers: '', maxFires: '', catchupPolicy: 'latest' })).toEqual({ notifyHTTPParam: { header: null }, maxFires: null, catchupPolicy: 'latest' });
    const stored = { failureWebhook: { url: 'https://example.com/dead', headers: { 'X-K': ['v'] } } };
    expect(patchInput(before, { ...before, failureWebhookUrl: 'https://example.com/other' }, stored)).toEqual({ failureWebhook: { url: 'https://example.com/other', headers: { 'X-K': ['v'] } } });
    expect(patchInput(before, { ...before, failureWebhookUrl: '' }, stored)).toEqual({ failureWebhook: null });
  });
});

describe('timer form values of calendars and the result webhook', () => {
  it('sends them only when set or changed', () => {
    const v = { ...emptyValues(), name: 'n', url: 'https://example.com/hook' };
    expect(createInput(v)).not.toHaveProperty('calendars');
    expect(createInput({ ...v, calendars: 'de-holidays, weekend', onExcluded: 'nextBusinessDay', resultWebhookUrl: 'https://example.com/a' })).toMatchObject({
      calendars: ['de-holidays', 'weekend'],
      onExcluded: 'nextBusinessDay',
      resultWebhook: { url: 'https://example.com/a' },
    });
    const before = { ...v, calendars: 'de-holidays', resultWebhookUrl: 'https://example.com/a' };
    expect(patchInput(before, { ...before, calendars: 'de-holidays ' })).toEqual({});
    expect(patchInput(before, { ...before, calendars: '', resultWebhookUrl: '' })).toEqual({ calendars: [], resultWebhook: null });
  });
});
