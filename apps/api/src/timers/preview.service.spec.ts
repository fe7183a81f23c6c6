import { ApiError } from '../common/errors';
import { PreviewQuery } from './dto/preview.query';
import { offsetText, PreviewService } from './preview.service';

const H = 3_600_000;
const NOW = Date.parse('2026-06-01T10:00:00.300Z');
const service = new PreviewService({ now: () => NOW });
const q = (over: Partial<PreviewQuery>) => over as PreviewQuery;

describe('PreviewService', () => {
  it('formats offsets as ISO 8601 does, seconds only for historical ones', () => {
    expect([0, 2 * H, -3.5 * H, 5.75 * H, 12.75 * H, -(15 * H + 56 * 60_000 + 8_000)].map(offsetText)).toEqual(['Z', '+02:00', '-03:30', '+05:45', '+12:45', '-15:56:08']);
  });

  it('looks from now by default, anchors every at now rounded up to the second, and counts 10 fires', () => {
    const every = service.preview(q({ every: '1m' }));
    expect(every.fires).toHaveLength(10);
    expect(every.fires[0]).toEqual({ at: Date.parse('2026-06-01T10:00:01Z'), utc: '2026-06-01T10:00:01.000Z', local: '2026-06-01T10:00:01Z' });
  });

  it('includes from, and shows wall times in the zone with milliseconds when they have some', () => {
    const from = Date.parse('2026-06-01T12:00:00Z');
    expect(service.preview(q({ runAt: from + 5, from, timeZone: 'Asia/Kathmandu' })).fires).toEqual([{ at: from + 5, utc: '2026-06-01T12:00:00.005Z', local: '2026-06-01T17:45:00.005+05:45' }]);
    expect(service.preview(q({ runAt: from, from })).fires).toHaveLength(1);
    expect(service.preview(q({ runAt: from - 1, from })).fires).toEqual([]);
  });

  it('answers a 400 naming the field for a schedule the library refuses', () => {
    expect(() => service.preview(q({ cron: '0 0 * * *', every: '1m' }))).toThrow(ApiError);
    try {
      service.preview(q({ every: '1m', dstOverlap: 'both' }));
    } catch (e) {
      expect((e as ApiError).message).toMatch(/^dstOverlap: /);
    }
    expect.assertions(2);
  });
});
