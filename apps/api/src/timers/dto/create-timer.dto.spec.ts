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
});
