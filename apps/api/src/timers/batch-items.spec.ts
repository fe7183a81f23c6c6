import { ApiError } from '../common/errors';
import { atItem, checkDistinctNames, itemMessage } from './batch-items';
import { BadRequestException } from '@nestjs/common';

describe('itemMessage', () => {
  it('puts the item before a message that names a field of the create', () => {
    expect(itemMessage(3, 'cron: bad field')).toBe('timers[3].cron: bad field');
    expect(itemMessage(0, 'notifyHTTPParam.url points to a loopback address')).toBe('timers[0].notifyHTTPParam.url points to a loopback address');
    expect(itemMessage(7, 'runAt 2020-01-01T00:00:00.000Z is not in the future')).toBe('timers[7].runAt 2020-01-01T00:00:00.000Z is not in the future');
  });

  it('sets the item apart from a message that names no field (a quota, admission)', () => {
    expect(itemMessage(2, 'quota minIntervalMs of app a is 1000 ms')).toBe('timers[2]: quota minIntervalMs of app a is 1000 ms');
    expect(itemMessage(2, 'admission: the second ...')).toBe('timers[2]: admission: the second ...');
    // A word that only starts like a field is not one.
    expect(itemMessage(1, 'cronjob x')).toBe('timers[1]: cronjob x');
  });
});

describe('atItem', () => {
  it('keeps the status, code and data of an ApiError, naming the item', () => {
    const e = (() => {
      try {
        atItem(4, () => {
          throw new ApiError(403, 40301, 'quota maxTimers ...', {}, { x: 1 });
        });
      } catch (err) {
        return err;
      }
    })() as ApiError;
    expect([e.status, e.code, e.message, e.data]).toEqual([403, 40301, 'timers[4]: quota maxTimers ...', { x: 1 }]);
  });

  it('turns the validation pipe\'s messages into one 400 naming each field of the item', () => {
    expect(() =>
      atItem(1, () => {
        throw new BadRequestException(['name must be a string', 'notifyHTTPParam.url must be a URL address']);
      }),
    ).toThrow(new ApiError(400, 40001, 'timers[1].name must be a string; timers[1].notifyHTTPParam.url must be a URL address'));
  });

  it('passes other errors through', () => {
    const boom = new Error('boom');
    expect(() => atItem(0, () => {
      throw boom;
    })).toThrow(boom);
    expect(atItem(0, () => 5)).toBe(5);
  });
});

describe('checkDistinctNames', () => {
  it('names the later of two items with one name and the first one', () => {
    expect(() => checkDistinctNames(['a', 'b', 'c', 'b'])).toThrow('timers[3].name: duplicate of timers[1] ("b")');
    expect(() => checkDistinctNames(['a', 'b'])).not.toThrow();
  });
});
