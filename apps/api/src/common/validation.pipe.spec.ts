import { BadRequestException } from '@nestjs/common';
import { CreateTimerDto } from '../timers/dto/create-timer.dto';
import { PatchTimerDto } from '../timers/dto/edit-timer.dto';
import { ListTimersQuery } from '../timers/dto/list-timers.query';
import { PreviewQuery } from '../timers/dto/preview.query';
import { ApiValidationPipe } from './validation.pipe';

const pipe = new ApiValidationPipe();
const create = (over: Record<string, unknown>) => ({ app: 'alpha', name: 'n', cron: '* * * * *', notifyHTTPParam: { url: 'https://hooks.example.com/t', method: 'POST' }, ...over });

async function problems(value: object, metatype: new () => object, type: 'body' | 'query' = 'body'): Promise<string[]> {
  try {
    await pipe.transform(value, { type, metatype });
    return [];
  } catch (e) {
    if (!(e instanceof BadRequestException)) throw e;
    return (e.getResponse() as { message: string[] }).message;
  }
}

describe('ApiValidationPipe', () => {
  // class-validator validates the elements of an array given for a nested DTO: [] passed as an empty one.
  it.each([
    ['notifyHTTPParam', create({ notifyHTTPParam: [] }), CreateTimerDto, 'notifyHTTPParam must be an object'],
    ['retryPolicy', create({ retryPolicy: [] }), CreateTimerDto, 'retryPolicy must be an object'],
    ['a PATCH notifyHTTPParam', { id: 1, app: 'alpha', version: 1, notifyHTTPParam: [{ url: 'https://h.example/' }] }, PatchTimerDto, 'notifyHTTPParam must be an object'],
    ['a string', create({ retryPolicy: 'often' }), CreateTimerDto, 'retryPolicy must be an object'],
  ])('refuses an array or a scalar for %s, naming it', async (_what, value, metatype, message) => {
    expect(await problems(value, metatype)).toEqual([message]);
  });

  it('still validates a nested object given as one', async () => {
    expect(await problems(create({ retryPolicy: { maxAttempts: 11 } }), CreateTimerDto)).toEqual(['retryPolicy.maxAttempts must not be greater than 10']);
    expect(await problems(create({ retryPolicy: null }), CreateTimerDto)).toEqual([]);
  });

  it('reads an empty query value as not given instead of 0', async () => {
    const q = (await pipe.transform({ app: 'alpha', status: '', pageSize: '' }, { type: 'query', metatype: ListTimersQuery })) as ListTimersQuery;
    expect(q).toMatchObject({ app: 'alpha', pageSize: 10 });
    expect(q.status).toBeUndefined();
    const missing = await problems({ app: '' }, ListTimersQuery, 'query');
    expect(missing.length).toBeGreaterThan(0);
    expect(missing.every((m) => m.startsWith('app must be'))).toBe(true);
  });

  it('counts an empty query value as not given for the schedule shape too', async () => {
    const q = (await pipe.transform({ cron: '0 0 * * *', every: '', runAt: '' }, { type: 'query', metatype: PreviewQuery })) as PreviewQuery;
    expect(q).toMatchObject({ cron: '0 0 * * *' });
    expect(q.every).toBeUndefined();
  });

  it('reads an integer query parameter written in digits only, as an id', async () => {
    for (const v of ['1.0', '1e1', '0x10', ' 5']) expect(await problems({ app: 'alpha', pageSize: v }, ListTimersQuery, 'query')).toEqual(['pageSize must be an integer']);
    expect(((await pipe.transform({ app: 'alpha', pageSize: '20' }, { type: 'query', metatype: ListTimersQuery })) as ListTimersQuery).pageSize).toBe(20);
  });
});
