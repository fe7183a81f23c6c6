import { ApiError } from '../common/errors';
import { PreviewQuery } from './dto/preview.query';
import { Principal } from '../auth/principal';
import { CalendarResolver } from './calendar-resolver';
import { offsetText, PreviewService } from './preview.service';

const H = 3_600_000;
const NOW = Date.parse('2026-06-01T10:00:00.300Z');
const weekend = { name: 'weekend', timeZone: null, exclude: { weekdays: [6, 7] } };
const resolver = { resolve: async (_app: string, names: string[]) => (names.includes('weekend') ? [weekend] : null) } as unknown as CalendarResolver;
const admin: Principal = { kind: 'admin' };
const previewer = new PreviewService({ now: () => NOW }, resolver);
const service = { preview: (query: PreviewQuery) => previewer.preview(admin, query) };
const q = (over: Partial<PreviewQuery>) => over as PreviewQuery;

describe('PreviewService', () => {
  it('formats offsets as ISO 8601 does, seconds only for historical ones', () => {
    expect([0, 2 * H, -3.5 * H, 5.75 * H, 12.75 * H, -(15 * H + 56 * 60_000 + 8_000)].map(offsetText)).toEqual(['Z', '+02:00', '-03:30', '+05:45', '+12:45', '-15:56:08']);
  });

  it('looks from now by default, anchors every at now rounded up to the second, and counts 10 fires', async () => {
    const every = await service.preview(q({ every: '1m' }));
    expect(every.fires).toHaveLength(10);
    expect(every.fires[0]).toEqual({ at: Date.parse('2026-06-01T10:00:01Z'), utc: '2026-06-01T10:00:01.000Z', local: '2026-06-01T10:00:01Z' });
  });

  it('includes from, and shows wall times in the zone with milliseconds when they have some', async () => {
    const from = Date.parse('2026-06-01T12:00:00Z');
    expect((await service.preview(q({ runAt: from + 5, from, timeZone: 'Asia/Kathmandu' }))).fires).toEqual([{ at: from + 5, utc: '2026-06-01T12:00:00.005Z', local: '2026-06-01T17:45:00.005+05:45' }]);
    expect((await service.preview(q({ runAt: from, from }))).fires).toHaveLength(1);
    expect((await service.preview(q({ runAt: from - 1, from }))).fires).toEqual([]);
  });

  it('answers a 400 naming the field for a schedule the library refuses', async () => {
    await expect(service.preview(q({ cron: '0 0 * * *', every: '1m' }))).rejects.toThrow(ApiError);
    await expect(service.preview(q({ every: '1m', dstOverlap: 'both' }))).rejects.toThrow(/^dstOverlap: /);
  });

  it('marks the fires a calendar excludes or moves, and needs the app with calendars', async () => {
    const from = Date.parse('2026-06-05T00:00:00Z'); // a Friday
    const skip = await service.preview(q({ cron: '0 9 * * *', from, count: 3, app: 'billing', calendars: ['weekend'] }));
    expect(skip.fires.map((f) => [f.utc, f.excluded ?? false, f.calendar ?? null])).toEqual([
      ['2026-06-05T09:00:00.000Z', false, null],
      ['2026-06-06T09:00:00.000Z', true, 'weekend'],
      ['2026-06-07T09:00:00.000Z', true, 'weekend'],
    ]);
    const moved = await service.preview(q({ cron: '0 9 6 6 *', from, count: 1, app: 'billing', calendars: ['weekend'], onExcluded: 'nextBusinessDay' }));
    expect(moved.fires).toEqual([expect.objectContaining({ utc: '2026-06-08T09:00:00.000Z', movedFrom: Date.parse('2026-06-06T09:00:00Z'), calendar: 'weekend' })]);
    await expect(service.preview(q({ cron: '0 9 * * *', calendars: ['weekend'] }))).rejects.toThrow(/^app: /);
  });
});
