import Holidays from 'date-holidays';
import { pollUntil, Receiver, sleep, Stack } from '../support';

// Calendars over the built roles: a holiday calendar skips the fires of its days (recorded missed as
// `calendar <name>`) and, edited, lets them through again; nextBusinessDay moves a month-end fire that
// falls on a weekend and previousBusinessDay brings a fire of an excluded day forward; the timer's GET
// and the preview mark both. The stack runs on the real clock, so the excluded day near now is a date
// added to the calendar (today's, tomorrow's).
jest.setTimeout(120_000);

const APP = 'e2e-calendars';
const DAY_MS = 86_400_000;
const MISSED = 4;

let stack: Stack;
let receiver: Receiver;

const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const hook = (path: string) => ({ url: receiver.url(path), method: 'POST' });
const calendar = (name: string, exclude: object) => stack.api.call('POST', '/api/app/v1/calendars', { app: APP, name, exclude });

beforeAll(async () => {
  receiver = await Receiver.start();
  stack = await Stack.start({ env: { TIMER_PREVIEW_COUNT: '12' } });
  await stack.api.call('POST', '/api/app/v1/apps', { app: APP });
}, 90_000);

afterAll(async () => {
  await stack?.stop();
  await receiver?.close();
});

describe('calendars', () => {
  it('a weekday cron with a country\'s holiday calendar skips its next public holiday; a day added near now is recorded missed, and let through once removed', async () => {
    await calendar('de', { holidays: [{ country: 'DE' }] });
    // The next German public holiday on a weekday, as date-holidays has it, excluded in the preview of a weekday cron.
    const today = isoDay(Date.now());
    const holidays = [new Date().getUTCFullYear(), new Date().getUTCFullYear() + 1].flatMap((y) => new Holidays('DE').getHolidays(y));
    const holiday = holidays.filter((h) => h.type === 'public').map((h) => h.date.slice(0, 10)).find((d) => d > today && [1, 2, 3, 4, 5].includes(new Date(`${d}T00:00:00Z`).getUTCDay())) as string;
    const q = new URLSearchParams({ cron: '0 9 * * 1-5', timeZone: 'UTC', count: '400', app: APP, calendars: 'de' });
    const preview = (await stack.api.call<{ data: { fires: { utc: string; excluded?: boolean; calendar?: string }[] } }>('GET', `/api/timer/v1/preview?${q}`)).data.fires;
    expect(preview.find((f) => f.utc === `${holiday}T09:00:00.000Z`)).toMatchObject({ excluded: true, calendar: 'de' });

    // Today added to a holiday calendar: an every-2-s timer's fires are recorded missed, none delivered.
    await calendar('de-today', { holidays: [{ country: 'DE' }], dates: [today] });
    const id = await stack.api.createEnabled({ app: APP, name: 'every-2s', cron: '*/2 * * * * *', calendars: ['de-today'], notifyHTTPParam: hook('/every-2s') });
    await sleep(5_000);
    const missed = (await stack.api.records(APP, id, { status: MISSED })).data.filter((r) => r.runAt <= Date.now());
    expect(missed.length).toBeGreaterThanOrEqual(2);
    expect(new Set(missed.map((r) => (r as { error?: string | null }).error))).toEqual(new Set(['calendar de-today']));
    expect(receiver.forTimer(id)).toEqual([]);

    // The calendar edited: the timer's open fires are regenerated and go out again within seconds.
    const edited = Date.now();
    const put = await stack.api.call<{ data: { regenerated: number } }>('PUT', `/api/app/v1/calendars/de-today?app=${APP}`, { exclude: { holidays: [{ country: 'DE' }] } });
    expect(put.data.regenerated).toBe(1);
    const delivered = await pollUntil(() => {
      const ds = receiver.forTimer(id).filter((d) => d.scheduledAt >= edited);
      return ds.length >= 2 ? ds : undefined;
    }, 15_000);
    expect(delivered?.length).toBeGreaterThanOrEqual(2);
    expect((delivered ?? []).every((d) => d.scheduledAt % 2_000 === 0)).toBe(true);
    await stack.api.unable(APP, id);
    // In use: the calendar cannot be deleted, and the answer names the timer.
    const res = await fetch(`${stack.api.baseUrl}/api/app/v1/calendars/de-today?app=${APP}`, { method: 'DELETE' });
    expect(res.status).toBe(409);
    expect(((await res.json()) as { msg: string }).msg).toContain(id);
  });

  it('nextBusinessDay moves a month-end fire that lands on a weekend, previousBusinessDay brings a fire forward; GET and preview mark them', async () => {
    await calendar('weekend', { weekdays: [6, 7] });
    const monthEnd = await stack.api.createTimer({ app: APP, name: 'month-end', cron: '0 9 L * *', calendars: ['weekend'], onExcluded: 'nextBusinessDay', notifyHTTPParam: hook('/month-end') });
    // The first last day of a month from now that is a Saturday or Sunday, and the Monday after it.
    let last = new Date();
    for (;;) {
      last = new Date(Date.UTC(last.getUTCFullYear(), last.getUTCMonth() + 1, 0, 9));
      if (last.getTime() > Date.now() && [0, 6].includes(last.getUTCDay())) break;
      last = new Date(Date.UTC(last.getUTCFullYear(), last.getUTCMonth() + 1, 1));
    }
    const monday = last.getTime() + (last.getUTCDay() === 6 ? 2 : 1) * DAY_MS;
    const got = await stack.api.getTimer(APP, monthEnd);
    expect(got.nextFireTimes).toContain(monday);
    expect(got.nextFireTimes).not.toContain(last.getTime());
    expect(got.calendar).toContainEqual({ at: monday, movedFrom: last.getTime(), calendar: 'weekend' });
    const q = new URLSearchParams({ cron: '0 9 L * *', count: '12', app: APP, calendars: 'weekend', onExcluded: 'nextBusinessDay' });
    const preview = (await stack.api.call<{ data: { fires: { at: number; movedFrom?: number; calendar?: string }[] } }>('GET', `/api/timer/v1/preview?${q}`)).data.fires;
    expect(preview).toContainEqual(expect.objectContaining({ at: monday, movedFrom: last.getTime(), calendar: 'weekend' }));

    // Tomorrow excluded: a cron that names only tomorrow's date, 20 s from now in wall time, fires today instead.
    const at = Math.ceil((Date.now() + 20_000) / 1000) * 1000;
    const tomorrow = new Date(at + DAY_MS);
    await calendar('tomorrow', { dates: [isoDay(tomorrow.getTime())] });
    const cron = `${tomorrow.getUTCSeconds()} ${tomorrow.getUTCMinutes()} ${tomorrow.getUTCHours()} ${tomorrow.getUTCDate()} ${tomorrow.getUTCMonth() + 1} *`;
    const early = await stack.api.createEnabled({ app: APP, name: 'early', cron, calendars: ['tomorrow'], onExcluded: 'previousBusinessDay', notifyHTTPParam: hook('/early') });
    const marks = (await stack.api.getTimer(APP, early)).calendar as { at: number; movedFrom: number }[];
    expect(marks[0]).toEqual({ at, movedFrom: at + DAY_MS, calendar: 'tomorrow' });
    const deliveries = await pollUntil(() => (receiver.forTimer(early).length > 0 ? receiver.forTimer(early) : undefined), 40_000);
    expect(deliveries?.map((d) => d.scheduledAt)).toEqual([at]);
    expect((deliveries?.[0].receivedAt ?? Infinity) - at).toBeLessThan(3_000);
  });
});
