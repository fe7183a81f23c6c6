import { ApiError } from '../common/errors';
import { DeadLetterSelectionDto } from './dto/dlq.dto';
import { selectorOf } from './dlq.service';

describe('selectorOf', () => {
  const dto = (v: Partial<DeadLetterSelectionDto>) => Object.assign(new DeadLetterSelectionDto(), { app: 'a', ...v });

  it('reads a selector given as null as not given', () => {
    expect(selectorOf(dto({ fireIds: null as unknown as string[], timerId: '1' }))).toEqual({ timerId: '1' });
    expect(selectorOf(dto({ timerId: null as unknown as string, all: true }))).toEqual({ all: true });
  });

  it('refuses none and several, naming them', () => {
    expect(() => selectorOf(dto({ fireIds: null as unknown as string[] }))).toThrow(ApiError);
    expect(() => selectorOf(dto({ timerId: '1', all: true }))).toThrow('timerId and all were given: give exactly one of fireIds, timerId or all');
  });
});
