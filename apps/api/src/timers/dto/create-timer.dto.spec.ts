import { BadRequestException } from '@nestjs/common';
import { ApiValidationPipe } from '../../common/validation.pipe';
import { CreateTimerDto } from './create-timer.dto';

const HOOK = 'https://hooks.example.com/t';
const body = (over: Record<string, unknown>) => ({ app: 'alpha', name: 'n', notifyHTTPParam: { url: HOOK, method: 'POST' }, ...over });

/** The messages the validation pipe answers with (each names its property path), or [] when valid. */
async function problems(value: object): Promise<string[]> {
  try {
    await new ApiValidationPipe().transform(value, { type: 'body', metatype: CreateTimerDto });
    return [];
  } catch (e) {
    if (!(e instanceof BadRequestException)) throw e;
    return (e.getResponse() as { message: string[] }).message;
  }
}

describe('CreateTimerDto', () => {
  it('reads runAt given as ISO 8601 with an offset, or epoch ms', async () => {
    const pipe = new ApiValidationPipe();
    const iso = (await pipe.transform(body({ runAt: '2027-02-28T23:30:00-01:00' }), { type: 'body', metatype: CreateTimerDto })) as CreateTimerDto;
    expect(iso.runAt).toBe(Date.UTC(2027, 2, 1, 0, 30));
    const ms = (await pipe.transform(body({ runAt: '1803981600000' }), { type: 'body', metatype: CreateTimerDto })) as CreateTimerDto;
    expect(ms.runAt).toBe(1_803_981_600_000);
  });

  it.each([
    ['2027-02-30T10:00:00Z', 'runAt "2027-02-30T10:00:00Z" is not a real date-time: day 30 does not exist in 2027-02'],
    ['2027-02-28T24:00Z', 'runAt "2027-02-28T24:00Z" is not a real date-time: hour must be 00-23 (24:00 is not accepted: write 00:00 of the next day)'],
    ['tomorrow', 'runAt must be epoch milliseconds or an ISO 8601 date-time with Z or an offset'],
  ])('refuses runAt %s instead of rolling it over', async (runAt, message) => {
    expect(await problems(body({ runAt }))).toEqual([message]);
  });

  it.each([
    ['userinfo', 'http://user:pass@hooks.example.com/t', /^notifyHTTPParam\.url must not contain credentials/],
    ['CR LF', 'https://hooks.example.com/t\r\nX-Injected: 1', /^notifyHTTPParam\.url must not contain control characters/],
    ['TAB', 'https://hooks.example.com/\tt', /^notifyHTTPParam\.url must not contain control characters/],
    ['port 0', 'https://hooks.example.com:0/t', /^notifyHTTPParam\.url must not use port 0/],
  ])('refuses a callback URL with %s, naming notifyHTTPParam.url', async (_why, url, message) => {
    const found = await problems(body({ notifyHTTPParam: { url, method: 'POST' } }));
    expect(found).toHaveLength(1);
    expect(found[0]).toMatch(message);
  });

  it('reads every, startAt and endAt (epoch ms or ISO with an offset) and maxFires', async () => {
    const dto = (await new ApiValidationPipe().transform(body({ every: '1h30m', startAt: '2030-01-01T01:00:00+01:00', endAt: 1_893_470_400_000, maxFires: 5 }), {
      type: 'body',
      metatype: CreateTimerDto,
    })) as CreateTimerDto;
    expect(dto).toMatchObject({ every: '1h30m', startAt: Date.UTC(2030, 0, 1), endAt: 1_893_470_400_000, maxFires: 5 });
  });

  it.each([
    ['every "0s"', { every: '0s' }, 'every must be at least 1s; got "0s"'],
    ['every in the wrong order', { every: '30m1h' }, /^every must be an interval such as "90s"/],
    ['every as a number', { every: 90 }, /^every must be an interval such as "90s"/],
    ['every over 366 days', { every: '367d' }, 'every must be at most 366d; got "367d"'],
    ['maxFires 0', { maxFires: 0 }, 'maxFires must not be less than 1'],
    ['maxFires over the maximum', { maxFires: 1_000_001 }, 'maxFires must not be greater than 1000000'],
    ['maxFires not an integer', { maxFires: 2.5 }, 'maxFires must be an integer'],
    ['maxFires as a string', { maxFires: '3' }, 'maxFires must be an integer'],
    ['startAt not a date', { startAt: 'soon' }, 'startAt must be epoch milliseconds or an ISO 8601 date-time with Z or an offset'],
    ['startAt without an offset', { startAt: '2030-01-01T00:00:00' }, 'startAt must be epoch milliseconds or an ISO 8601 date-time with Z or an offset'],
    ['endAt impossible', { endAt: '2030-02-30T00:00:00Z' }, 'endAt "2030-02-30T00:00:00Z" is not a real date-time: day 30 does not exist in 2030-02'],
    ['endAt negative', { endAt: -1 }, 'endAt must be epoch milliseconds or an ISO 8601 date-time with Z or an offset'],
    ['an unknown overlapPolicy', { overlapPolicy: 'forbid' }, /^overlapPolicy must be one of the following values: allow, skip, buffer_one/],
    ['an unknown catchupPolicy', { catchupPolicy: 'first' }, /^catchupPolicy must be one of the following values: all, latest, none/],
    ['catchupWindowMs negative', { catchupWindowMs: -1 }, 'catchupWindowMs must not be less than 0'],
    ['catchupWindowMs over 7 days', { catchupWindowMs: 604_800_001 }, 'catchupWindowMs must not be greater than 604800000'],
    ['jitterMs not an integer', { jitterMs: 1.5 }, 'jitterMs must be an integer'],
    ['jitterMs over an hour', { jitterMs: 3_600_001 }, 'jitterMs must not be greater than 3600000'],
  ])('refuses %s, naming the field', async (_why, over, message) => {
    const found = await problems(body('every' in over ? over : { cron: '* * * * *', ...over }));
    expect(found).toEqual([typeof message === 'string' ? message : expect.stringMatching(message)]);
  });

  it('answers one message per problem: the schedule shape first, a type error by its type, none twice', async () => {
    expect(await problems(body({ cron: '* * * * *', runAt: 1, every: '1m', maxFires: 3 }))).toEqual(['give exactly one of cron, runAt and every (got cron and runAt and every)']);
    expect(await problems(body({ cron: '* * * * *', retryPolicy: { maxAttempts: '3' } }))).toEqual(['retryPolicy.maxAttempts must be an integer']);
    expect(await problems(body({ cron: '* * * * *', name: 7 }))).toEqual(['name must be a string']);
  });
});
