import { FormEvent, ReactNode, useState } from 'react';
import type { CallbackMethod } from '@timer/client';
import { fieldsOf, Timer, TimerChange, TimerInput } from './api';
import { ErrorBanner, Field, messageOf } from './components';
import { localInputToIso, userZone } from './time';

export type ScheduleKind = 'cron' | 'every' | 'runAt';

/** The form's values: strings as the inputs hold them. */
export interface TimerFormValues {
  name: string;
  kind: ScheduleKind;
  cron: string;
  every: string;
  /** `datetime-local` (the user's wall clock). */
  runAt: string;
  timeZone: string;
  url: string;
  method: string;
  body: string;
}

const METHODS = ['POST', 'GET', 'PUT', 'PATCH', 'DELETE'];

export function emptyValues(): TimerFormValues {
  return { name: '', kind: 'cron', cron: '0 * * * * *', every: '1m', runAt: '', timeZone: userZone(), url: '', method: 'POST', body: '' };
}

function wallClock(ms: number): string {
  const d = new Date(ms);
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())}T${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`;
}

export function valuesOf(t: Timer): TimerFormValues {
  return {
    name: t.name,
    kind: t.cron ? 'cron' : t.every ? 'every' : 'runAt',
    cron: t.cron ?? '',
    every: t.every ?? '',
    runAt: t.runAt !== null ? wallClock(t.runAt) : '',
    timeZone: t.timeZone,
    url: t.notifyHTTPParam.url,
    method: t.notifyHTTPParam.method,
    body: t.notifyHTTPParam.body ?? '',
  };
}

/** Every field of a create, as the API reads them (it validates; the console does not second-guess it). */
export function createInput(v: TimerFormValues): TimerInput {
  return {
    name: v.name,
    ...scheduleInput(v),
    timeZone: v.timeZone || undefined,
    notifyHTTPParam: { url: v.url, method: v.method as CallbackMethod, ...(v.body ? { body: v.body } : {}) },
  };
}

function scheduleInput(v: TimerFormValues): Pick<TimerInput, 'cron' | 'every' | 'runAt'> {
  if (v.kind === 'cron') return { cron: v.cron };
  if (v.kind === 'every') return { every: v.every };
  // An empty or unreadable value is sent as typed, so the API's message names runAt.
  return { runAt: localInputToIso(v.runAt) ?? v.runAt };
}

/** Only what changed, for a PATCH: a schedule given replaces the schedule, a cleared body is removed. */
export function patchInput(before: TimerFormValues, v: TimerFormValues): TimerChange {
  const out: TimerChange = {};
  if (v.name !== before.name) out.name = v.name;
  if (v.kind !== before.kind || v[v.kind] !== before[v.kind]) Object.assign(out, scheduleInput(v));
  if (v.timeZone !== before.timeZone) out.timeZone = v.timeZone;
  const n: NonNullable<TimerChange['notifyHTTPParam']> = {};
  if (v.url !== before.url) n.url = v.url;
  if (v.method !== before.method) n.method = v.method as CallbackMethod;
  if (v.body !== before.body) n.body = v.body === '' ? null : v.body;
  if (Object.keys(n).length > 0) out.notifyHTTPParam = n;
  return out;
}

/**
 * The definition form of create and edit. `submit` calls the API; a 400's messages are shown next to
 * the field each names (the rest above the button), any other failure in the banner.
 */
export function TimerForm(props: {
  initial: TimerFormValues;
  submitLabel: string;
  submit: (v: TimerFormValues) => Promise<void>;
  onCancel?: () => void;
  extra?: ReactNode;
}) {
  const [v, setV] = useState(props.initial);
  const [fields, setFields] = useState<Record<string, string>>({});
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  const set = (k: keyof TimerFormValues) => (e: { target: { value: string } }) => setV({ ...v, [k]: e.target.value });

  const onSubmit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setFields({});
    setError(undefined);
    try {
      await props.submit(v);
    } catch (err) {
      const found = fieldsOf(err);
      if (Object.keys(found).length > 0) {
        const known = new Set(['name', 'cron', 'every', 'runAt', 'timeZone', 'notifyHTTPParam.url', 'notifyHTTPParam.method', 'notifyHTTPParam.body']);
        setFields(found);
        const rest = Object.entries(found).filter(([k]) => !known.has(k));
        setError(rest.length > 0 ? rest.map(([, m]) => m).join('; ') : undefined);
      } else {
        setError(messageOf(err));
      }
    } finally {
      setBusy(false);
    }
  };

  return (
    <form onSubmit={onSubmit} className="timer-form" noValidate>
      <Field label="Name" error={fields.name}>
        {(id, d) => <input id={id} name="name" value={v.name} onChange={set('name')} aria-invalid={!!fields.name} aria-describedby={d} />}
      </Field>
      <fieldset>
        <legend>Schedule</legend>
        <div className="kinds" role="radiogroup" aria-label="Schedule kind">
          {(
            [
              ['cron', 'Cron'],
              ['every', 'Interval'],
              ['runAt', 'Once'],
            ] as const
          ).map(([k, label]) => (
            <label key={k} className="inline">
              <input type="radio" name="kind" value={k} checked={v.kind === k} onChange={() => setV({ ...v, kind: k })} /> {label}
            </label>
          ))}
        </div>
        {v.kind === 'cron' && (
          <Field label="Cron" error={fields.cron} hint="5 fields, or 6 with seconds first; evaluated in the time zone below.">
            {(id, d) => <input id={id} name="cron" value={v.cron} onChange={set('cron')} aria-invalid={!!fields.cron} aria-describedby={d} />}
          </Field>
        )}
        {v.kind === 'every' && (
          <Field label="Every" error={fields.every ?? fields.startAt} hint='d, h, m, s in that order: "90s", "5m", "1h30m".'>
            {(id, d) => <input id={id} name="every" value={v.every} onChange={set('every')} aria-invalid={!!fields.every} aria-describedby={d} />}
          </Field>
        )}
        {v.kind === 'runAt' && (
          <Field label="At (your time)" error={fields.runAt}>
            {(id, d) => <input id={id} name="runAt" type="datetime-local" step="1" value={v.runAt} onChange={set('runAt')} aria-invalid={!!fields.runAt} aria-describedby={d} />}
          </Field>
        )}
        <Field label="Time zone" error={fields.timeZone} hint="IANA name, e.g. Europe/Berlin.">
          {(id, d) => <input id={id} name="timeZone" value={v.timeZone} onChange={set('timeZone')} aria-invalid={!!fields.timeZone} aria-describedby={d} />}
        </Field>
      </fieldset>
      <fieldset>
        <legend>Callback</legend>
        <Field label="URL" error={fields['notifyHTTPParam.url']}>
          {(id, d) => <input id={id} name="url" type="url" value={v.url} onChange={set('url')} aria-invalid={!!fields['notifyHTTPParam.url']} aria-describedby={d} />}
        </Field>
        <Field label="Method" error={fields['notifyHTTPParam.method']}>
          {(id, d) => (
            <select id={id} name="method" value={v.method} onChange={set('method')} aria-describedby={d}>
              {METHODS.map((m) => (
                <option key={m}>{m}</option>
              ))}
            </select>
          )}
        </Field>
        <Field label="Body" error={fields['notifyHTTPParam.body']} hint="Sent verbatim.">
          {(id, d) => <textarea id={id} name="body" rows={3} value={v.body} onChange={set('body')} aria-invalid={!!fields['notifyHTTPParam.body']} aria-describedby={d} />}
        </Field>
      </fieldset>
      {props.extra}
      <ErrorBanner error={error} />
      <div className="actions">
        <button type="submit" className="primary" disabled={busy}>
          {props.submitLabel}
        </button>
        {props.onCancel && (
          <button type="button" onClick={props.onCancel}>
            Cancel
          </button>
        )}
      </div>
    </form>
  );
}
