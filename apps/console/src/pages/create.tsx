import { useState } from 'react';
import { ROUTES } from '@timer/client';
import { Api, fieldsOf, PreviewResult } from '../api';
import { CalendarNote, ErrorBanner, Link, messageOf, Time } from '../components';
import { hrefOf, navigate } from '../router';
import { localInputToIso, userZone } from '../time';
import { createInput, emptyValues, TimerForm, TimerFormValues } from '../timer-form';
import { calendarNames } from '../timer-values';

const PREVIEW_COUNT = 5;

/** The API has calendars when the client's route table lists their route. */
const HAS_CALENDARS = Object.values(ROUTES).some((r) => (r.path as string) === '/api/app/v1/calendars');

/** A preview fire, with what a calendar did to it where the API has calendars. */
type PreviewFire = PreviewResult['fires'][number] & { calendar?: string; excluded?: boolean; movedFrom?: number };

/** The schedule of the form as the preview route reads it (with the app's calendars, where named). */
function previewQuery(v: TimerFormValues, app: string) {
  const when = (s: string) => (s ? (localInputToIso(s) ?? s) : undefined);
  const calendars = calendarNames(v.calendars);
  return {
    ...(HAS_CALENDARS && calendars.length > 0 ? { app, calendars: calendars.join(','), onExcluded: v.onExcluded } : {}),
    ...(v.kind === 'cron' ? { cron: v.cron, dstGap: v.dstGap as 'shift' | 'skip', dstOverlap: v.dstOverlap as 'first' | 'both' } : v.kind === 'every' ? { every: v.every } : { runAt: when(v.runAt) }),
    timeZone: v.timeZone || undefined,
    ...(v.kind !== 'runAt' ? { startAt: when(v.startAt), endAt: when(v.endAt) } : {}),
    count: PREVIEW_COUNT,
  };
}

/**
 * The next fires of the schedule typed so far, from the service's preview route (nothing is created):
 * each in the timer's zone and in the viewer's, both labelled.
 */
function SchedulePreview({ api, v }: { api: Api; v: TimerFormValues }) {
  const [result, setResult] = useState<PreviewResult>();
  const [error, setError] = useState<string>();
  const run = async () => {
    setError(undefined);
    try {
      setResult(await api.preview(previewQuery(v, api.app) as Parameters<Api['preview']>[0]));
    } catch (e) {
      setResult(undefined);
      const f = fieldsOf(e);
      setError(Object.keys(f).length > 0 ? Object.values(f).join('; ') : messageOf(e));
    }
  };
  return (
    <section className="schedule-preview" aria-label="Preview of the next fires">
      <button type="button" onClick={run}>
        Preview the next fires
      </button>
      <ErrorBanner error={error} />
      {result && result.fires.length === 0 && <p className="muted">This schedule has no fire to come.</p>}
      {result && result.fires.length > 0 && (
        <table className="list preview-table">
          <thead>
            <tr>
              <th scope="col">In the timer&apos;s zone ({result.timeZone})</th>
              <th scope="col">In your zone ({userZone()})</th>
            </tr>
          </thead>
          <tbody>
            {(result.fires as PreviewFire[]).map((f) => (
              <tr key={f.at} className={f.excluded ? 'excluded' : undefined}>
                <td data-label="Timer's zone">
                  <Time ms={f.at} zone={result.timeZone} />
                  {f.dst && <span className="dst"> DST: {f.dst}</span>}
                  <CalendarNote mark={f} zone={result.timeZone} />
                </td>
                <td data-label="Your zone">
                  <Time ms={f.at} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

/** A new timer. The API creates timers disabled; "enable now" enables it right after. */
export function CreateTimer({ api }: { api: Api }) {
  const [enable, setEnable] = useState(false);
  return (
    <main>
      <p>
        <Link href={hrefOf({ page: 'timers' })}>← Timers</Link>
      </p>
      <h1>New timer in {api.app}</h1>
      <TimerForm
        initial={emptyValues()}
        submitLabel="Create timer"
        submit={async (v) => {
          const { id } = await api.createTimer(createInput(v));
          if (enable) await api.enable(id);
          navigate(hrefOf({ page: 'timer', id: String(id) }));
        }}
        onCancel={() => navigate(hrefOf({ page: 'timers' }))}
        scheduleExtra={(v) => <SchedulePreview api={api} v={v} />}
        show={{ calendars: HAS_CALENDARS, resultWebhook: true }}
        extra={
          <label className="inline">
            <input type="checkbox" name="enable" checked={enable} onChange={(e) => setEnable(e.target.checked)} /> Enable now
          </label>
        }
      />
    </main>
  );
}
