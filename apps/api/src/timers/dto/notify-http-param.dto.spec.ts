import { BadRequestException } from '@nestjs/common';
import { ApiValidationPipe } from '../../common/validation.pipe';
import { checkDefinition, fieldsOf, patchedFields } from '../timer-definition';
import { CreateTimerDto } from './create-timer.dto';
import { PatchTimerDto } from './edit-timer.dto';

const NOW = Date.UTC(2030, 0, 1);
const RULES = { now: NOW, allowPrivateCallbacks: false, callbackBodyMaxBytes: 1024, callbackTimeoutMaxMs: 30_000 };
const body = (notify: Record<string, unknown>) => ({ app: 'alpha', name: 'n', cron: '0 * * * * *', notifyHTTPParam: { url: 'https://hooks.example.com/t', method: 'POST', ...notify } });

async function create(value: object): Promise<CreateTimerDto | string[]> {
  try {
    return (await new ApiValidationPipe().transform(value, { type: 'body', metatype: CreateTimerDto })) as CreateTimerDto;
  } catch (e) {
    if (!(e instanceof BadRequestException)) throw e;
    return (e.getResponse() as { message: string[] }).message;
  }
}

/** The 400 message of checkDefinition, or undefined when the definition passes. */
function definitionProblem(dto: CreateTimerDto, rules = RULES): string | undefined {
  try {
    checkDefinition(fieldsOf(dto), rules, true);
    return undefined;
  } catch (e) {
    return (e as Error).message;
  }
}

describe('notifyHTTPParam.timeoutMs', () => {
  it('is kept in the stored callback when given, absent (the global timeout) when not', async () => {
    const given = (await create(body({ timeoutMs: 1_000 }))) as CreateTimerDto;
    expect(fieldsOf(given).notifyHttpParam).toEqual({ url: 'https://hooks.example.com/t', method: 'POST', timeoutMs: 1_000 });
    expect(definitionProblem(given)).toBeUndefined();
    const absent = (await create(body({}))) as CreateTimerDto;
    expect(fieldsOf(absent).notifyHttpParam).not.toHaveProperty('timeoutMs');
  });

  it.each([999, 0, -5, 1.5, '5000', 120_001])('refuses %j naming the field and the bounds', async (timeoutMs) => {
    expect(await create(body({ timeoutMs }))).toEqual(['notifyHTTPParam.timeoutMs must be an integer number of milliseconds from 1000 to TIMER_CALLBACK_TIMEOUT_MAX_MS']);
  });

  it('refuses more than the configured TIMER_CALLBACK_TIMEOUT_MAX_MS, naming the bounds', async () => {
    const dto = (await create(body({ timeoutMs: 30_001 }))) as CreateTimerDto;
    expect(definitionProblem(dto)).toBe('notifyHTTPParam.timeoutMs must be from 1000 to 30000 ms (TIMER_CALLBACK_TIMEOUT_MAX_MS); got 30001');
    expect(definitionProblem(dto, { ...RULES, callbackTimeoutMaxMs: 60_000 })).toBeUndefined();
  });

  it('is patched like the other callback fields: a number replaces it, null removes it, absent keeps it', async () => {
    const stored = fieldsOf((await create(body({ timeoutMs: 2_000 }))) as CreateTimerDto);
    const patch = async (notify: Record<string, unknown>) =>
      patchedFields(stored, (await new ApiValidationPipe().transform({ id: '1', app: 'alpha', version: 1, notifyHTTPParam: notify }, { type: 'body', metatype: PatchTimerDto })) as PatchTimerDto);
    expect((await patch({ timeoutMs: 3_000 })).notifyHttpParam.timeoutMs).toBe(3_000);
    expect((await patch({ timeoutMs: null })).notifyHttpParam).not.toHaveProperty('timeoutMs');
    expect((await patch({ url: 'https://hooks.example.com/other' })).notifyHttpParam).toMatchObject({ url: 'https://hooks.example.com/other', timeoutMs: 2_000 });
  });
});
