import { BadRequestException } from '@nestjs/common';
import { ApiValidationPipe } from '../../common/validation.pipe';
import { PatchTimerDto, TimerVersionsQuery, UpdateTimerDto } from './edit-timer.dto';

const HOOK = 'https://hooks.example.com/t';
const put = (over: Record<string, unknown> = {}) => ({ id: 42, app: 'alpha', version: 3, name: 'n', cron: '* * * * *', notifyHTTPParam: { url: HOOK, method: 'post' }, ...over });

async function transform<T>(metatype: new () => T, value: object, type: 'body' | 'query' = 'body'): Promise<T | string[]> {
  try {
    return (await new ApiValidationPipe().transform(value, { type, metatype })) as T;
  } catch (e) {
    if (!(e instanceof BadRequestException)) throw e;
    return (e.getResponse() as { message: string[] }).message;
  }
}

describe('UpdateTimerDto (PUT)', () => {
  it('takes every field of create plus the id (number or digit string) and the version', async () => {
    const dto = (await transform(UpdateTimerDto, put({ id: '42', runAt: '2030-01-01T00:00:00Z', cron: undefined }))) as UpdateTimerDto;
    expect(dto).toBeInstanceOf(UpdateTimerDto);
    expect(dto).toMatchObject({ id: '42', app: 'alpha', version: 3, runAt: Date.UTC(2030, 0, 1), notifyHTTPParam: { method: 'POST' } });
  });

  it.each([
    ['missing', { version: undefined }],
    ['a string', { version: '3' }],
    ['not a number', { version: 'three' }],
    ['a fraction', { version: 1.5 }],
    ['zero', { version: 0 }],
  ])('refuses a version that is %s, naming the field', async (_why, over) => {
    expect(await transform(UpdateTimerDto, put(over))).toEqual(['version must be an integer: the current version of the timer (from create or GET)']);
  });

  it('refuses what create refuses (a missing name, a bad URL) and unknown fields such as status', async () => {
    const found = (await transform(UpdateTimerDto, put({ name: undefined, status: 2, notifyHTTPParam: { url: 'ftp://x', method: 'POST' } }))) as string[];
    expect(found).toEqual(
      expect.arrayContaining([expect.stringMatching(/^property status should not exist/), expect.stringMatching(/^name /), expect.stringMatching(/^notifyHTTPParam\.url /)]),
    );
  });
});

describe('PatchTimerDto (PATCH)', () => {
  it('needs only the id, the app and the version', async () => {
    expect(await transform(PatchTimerDto, { id: 7, app: 'alpha', version: 1 })).toMatchObject({ id: '7', app: 'alpha', version: 1 });
    expect(await transform(PatchTimerDto, { id: 7, version: 1 })).toEqual(expect.arrayContaining([expect.stringMatching(/^app must be/)]));
    expect(await transform(PatchTimerDto, { app: 'alpha', id: 7 })).toEqual(['version must be an integer: the current version of the timer (from create or GET)']);
  });

  it('validates each field given with the rules of create, a partial notifyHTTPParam included', async () => {
    const dto = (await transform(PatchTimerDto, { id: 7, app: 'alpha', version: 1, notifyHTTPParam: { method: 'put', header: null, body: null } })) as PatchTimerDto;
    expect(dto.notifyHTTPParam).toMatchObject({ method: 'PUT', header: null, body: null });
    expect(await transform(PatchTimerDto, { id: 7, app: 'alpha', version: 1, notifyHTTPParam: { url: 'http://u:p@h/' } })).toEqual([
      expect.stringMatching(/^notifyHTTPParam\.url must not contain credentials/),
    ]);
    expect(await transform(PatchTimerDto, { id: 7, app: 'alpha', version: 1, retryPolicy: { maxAttempts: 11 } })).toEqual([
      'retryPolicy.maxAttempts must not be greater than 10',
    ]);
    expect(await transform(PatchTimerDto, { id: 7, app: 'alpha', version: 1, name: '' })).toEqual(['name must not be blank']);
  });
});

describe('TimerVersionsQuery', () => {
  it('reads the id, the app and the paging of the list routes', async () => {
    expect(await transform(TimerVersionsQuery, { id: '9', app: 'alpha', pageSize: '5' }, 'query')).toMatchObject({ id: '9', app: 'alpha', pageIndex: 1, pageSize: 5 });
    expect(await transform(TimerVersionsQuery, { id: '9', app: 'alpha', pageSize: '500' }, 'query')).toEqual(['pageSize must not be greater than 100']);
  });
});

describe('PatchTimerDto bounds', () => {
  it('takes every, startAt, endAt and maxFires, and null to remove a bound', async () => {
    const dto = (await transform(PatchTimerDto, { id: 1, app: 'alpha', version: 2, every: '90s', startAt: null, endAt: '2030-01-01T00:00:00Z', maxFires: null })) as PatchTimerDto;
    expect(dto).toMatchObject({ every: '90s', startAt: null, endAt: Date.UTC(2030, 0, 1), maxFires: null });
  });

  it.each([
    ['every "0s"', { every: '0s' }, /^every must be at least 1s/],
    ['maxFires 0', { maxFires: 0 }, /^maxFires must not be less than 1/],
  ])('refuses %s, naming the field', async (_why, over, message) => {
    const found = (await transform(PatchTimerDto, { id: 1, app: 'alpha', version: 2, ...over })) as string[];
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(message);
  });
});
