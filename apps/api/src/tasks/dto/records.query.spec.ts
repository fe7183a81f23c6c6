import { BadRequestException } from '@nestjs/common';
import { ApiValidationPipe } from '../../common/validation.pipe';
import { RecordsQuery } from './records.query';

async function parse(query: Record<string, string>): Promise<RecordsQuery> {
  return (await new ApiValidationPipe().transform(query, { type: 'query', metatype: RecordsQuery })) as RecordsQuery;
}

/** The messages the validation pipe answers with, or [] when valid. */
async function problems(query: Record<string, string>): Promise<string[]> {
  try {
    await parse(query);
    return [];
  } catch (e) {
    if (!(e instanceof BadRequestException)) throw e;
    return (e.getResponse() as { message: string[] }).message;
  }
}

describe('RecordsQuery', () => {
  it('needs only the app (an app-wide query), with the paging defaults', async () => {
    const q = await parse({ app: 'billing' });
    expect(q).toMatchObject({ app: 'billing', pageIndex: 1, pageSize: 10 });
    expect(q.timerID).toBeUndefined();
    expect(q.includePending).toBeUndefined();
  });

  it('reads from and to as epoch ms or ISO 8601 with an offset, includePending as a boolean', async () => {
    const q = await parse({ app: 'a', from: '1767225600000', to: '2026-01-01T02:00:00+01:00', includePending: 'true', status: '3', fireID: '42-1767225600000' });
    expect(q).toMatchObject({ from: 1_767_225_600_000, to: Date.UTC(2026, 0, 1, 1), includePending: true, status: 3, fireID: '42-1767225600000' });
    expect((await parse({ app: 'a', includePending: 'false' })).includePending).toBe(false);
  });

  it.each([
    [{ from: 'yesterday' }, 'from must be epoch milliseconds or an ISO 8601 date-time with Z or an offset'],
    [{ to: '2026-02-30T00:00:00Z' }, 'to "2026-02-30T00:00:00Z" is not a real date-time: day 30 does not exist in 2026-02'],
    [{ to: '2026-01-01T00:00:00' }, 'to must be epoch milliseconds or an ISO 8601 date-time with Z or an offset'],
    [{ fireID: '42' }, 'fireID must be a fire id: <timerId>-<runAtMs> (as in X-Timer-Fire-Id)'],
    [{ fireID: 'x-1767225600000' }, 'fireID must be a fire id: <timerId>-<runAtMs> (as in X-Timer-Fire-Id)'],
    [{ timerID: '0' }, 'timerID must be a positive integer timer id'],
    [{ includePending: 'yes' }, 'includePending must be true or false'],
    [{ status: '9' }, 'status must be one of 0 (pending), 1 (running), 2 (succeeded), 3 (failed), 4 (missed)'],
    [{ pageSize: '101' }, 'pageSize must not be greater than 100'],
  ])('refuses %j naming the field', async (bad, message) => {
    expect(await problems({ app: 'a', ...bad })).toEqual([message]);
  });

  it('refuses an unknown parameter and a missing app', async () => {
    expect(await problems({ app: 'a', timerId: '1' })).toEqual(['property timerId should not exist']);
    expect((await problems({})).some((m) => m.startsWith('app must be'))).toBe(true);
  });
});
