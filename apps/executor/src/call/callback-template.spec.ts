import { TimerEntity } from '@timer/dal';
import { callbackPartsOf } from './callback-template';

const T0 = Date.parse('2026-01-01T00:00:10Z');

function timer(notify: Partial<TimerEntity['notifyHttpParam']>, schedule: Partial<TimerEntity> = {}): TimerEntity {
  return {
    id: '42', app: 'billing', cron: null, runAt: null, everyMs: 5_000, startAt: Date.parse('2026-01-01T00:00:00Z'), timeZone: 'UTC',
    notifyHttpParam: { url: 'https://h.example/x', method: 'POST', ...notify },
    ...schedule,
  } as TimerEntity;
}

describe('callbackPartsOf', () => {
  it('sends a body with placeholders byte for byte when template is not true', () => {
    const body = '{"at":"{{scheduledAt}}","x":"é \\u0000 {{nope}}"}';
    for (const template of [undefined, false]) {
      const t = timer({ url: 'https://h.example/{{app}}', body, header: { 'X-A': ['{{fireId}}'] }, template });
      expect(callbackPartsOf(t, { timerId: '42', runAt: T0, attempt: 1 })).toEqual({ url: 'https://h.example/{{app}}', header: { 'X-A': ['{{fireId}}'] }, body });
    }
  });

  it('fills every placeholder per fire when template is true', () => {
    const t = timer({
      url: 'https://h.example/{{app}}?at={{scheduledAtIso}}',
      header: { 'X-Fire': ['{{fireId}}/{{attempt}}'] },
      body: '{{scheduledAt}}|{{scheduledAtIso}}|{{previousScheduledAt}}|{{fireId}}|{{attempt}}|{{timerId}}|{{app}}',
      template: true,
    });
    expect(callbackPartsOf(t, { timerId: '42', runAt: T0, attempt: 3 })).toEqual({
      url: 'https://h.example/billing?at=2026-01-01T00%3A00%3A10.000Z',
      header: { 'X-Fire': [`42-${T0}/3`] },
      body: `${T0}|2026-01-01T00:00:10.000Z|${T0 - 5_000}|42-${T0}|3|42|billing`,
    });
  });

  it('previousScheduledAt is empty for the first fire and follows a cron in its zone', () => {
    const first = timer({ body: '[{{previousScheduledAt}}]', template: true });
    expect(callbackPartsOf(first, { timerId: '42', runAt: Date.parse('2026-01-01T00:00:00Z'), attempt: 1 }).body).toBe('[]');
    const cron = timer({ body: '{{previousScheduledAt}}', template: true }, { cron: '0 9 * * *', everyMs: null, startAt: null, timeZone: 'Europe/Berlin' });
    expect(callbackPartsOf(cron, { timerId: '42', runAt: Date.parse('2026-03-30T07:00:00Z'), attempt: 1 }).body).toBe(String(Date.parse('2026-03-29T07:00:00Z')));
  });
});
