import { FormEvent, ReactNode, useState } from 'react';
import { fieldsOf } from './api';
import { ErrorBanner, Field, messageOf } from './components';
import { userZone } from './time';
import { FIELD_LABELS, TimerFormValues, VALUE_PATHS } from './timer-values';

export { createInput, emptyValues, headerLines, patchInput, valuesOf } from './timer-values';
export type { TimerFormValues } from './timer-values';

const METHODS = ['POST', 'GET', 'PUT', 'PATCH', 'DELETE'];

/** Messages about fields the form has no input for, or about no field: shown above the buttons. */
function unplaced(found: Record<string, string>): string | undefined {
  const rest = Object.entries(found).filter(([k]) => !(k in FIELD_LABELS));
  return rest.length > 0 ? rest.map(([, m]) => m).join('; ') : undefined;
}

type Setter = (k: keyof TimerFormValues) => (e: { target: { value: string } }) => void;

/** A text input in a Field, wired to its value and its message. */
function TextField(props: { label: string; name: keyof TimerFormValues; path: string; v: TimerFormValues; set: Setter; fields: Record<string, string>; hint?: string; type?: string; inputMode?: 'numeric' }) {
  const error = props.fields[props.path];
  return (
    <Field label={props.label} error={error} hint={props.hint}>
      {(id, d) => (
        <input
          id={id}
          name={props.name}
          type={props.type ?? 'text'}
          step={props.type === 'datetime-local' ? 1 : undefined}
          inputMode={props.inputMode}
          value={props.v[props.name] as string}
          onChange={props.set(props.name)}
          aria-invalid={!!error}
          aria-describedby={d}
        />
      )}
    </Field>
  );
}

/** A select in a Field; `options` are [value, label]. */
function SelectField(props: { label: string; name: keyof TimerFormValues; path: string; v: TimerFormValues; set: Setter; fields: Record<string, string>; options: readonly (readonly [string, string])[]; hint?: string }) {
  const error = props.fields[props.path];
  return (
    <Field label={props.label} error={error} hint={props.hint}>
      {(id, d) => (
        <select id={id} name={props.name} value={props.v[props.name] as string} onChange={props.set(props.name)} aria-invalid={!!error} aria-describedby={d}>
          {props.options.map(([value, label]) => (
            <option key={value} value={value}>
              {label}
            </option>
          ))}
        </select>
      )}
    </Field>
  );
}

/**
 * The definition form of create and edit: every field the API takes. `submit` calls the API; every
 * message of a 400 is shown at once, each under the field it names, with a count above the buttons;
 * any other failure in the banner.
 */
export function TimerForm(props: {
  initial: TimerFormValues;
  submitLabel: string;
  submit: (v: TimerFormValues) => Promise<void>;
  onCancel?: () => void;
  extra?: ReactNode;
  /** Below the schedule fields (the create page's preview). */
  scheduleExtra?: (v: TimerFormValues) => ReactNode;
  /** The fields of calendars and of the result webhook, where the API takes them. */
  show?: { calendars?: boolean; resultWebhook?: boolean };
}) {
  const [v, setV] = useState(props.initial);
  const [fields, setFields] = useState<Record<string, string>>({});
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);
  // A field changed since the answer: its message no longer applies.
  const clear = (k: keyof TimerFormValues) =>
    setFields((f) => {
      const path = VALUE_PATHS[k] ?? k;
      if (!(path in f)) return f;
      const rest = { ...f };
      delete rest[path];
      return rest;
    });
  const set: Setter = (k) => (e) => {
    setV({ ...v, [k]: e.target.value });
    clear(k);
  };
  const common = { v, set, fields };

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
        setFields(found);
        setError(unplaced(found));
      } else {
        setError(messageOf(err));
      }
    } finally {
      setBusy(false);
    }
  };
  // In the order of the form, whatever order the answer named them in.
  const placed = Object.keys(FIELD_LABELS).filter((k) => k in fields);

  return (
    <form onSubmit={onSubmit} className="timer-form" noValidate>
      <TextField label="Name" name="name" path="name" {...common} />
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
        {v.kind === 'cron' && <TextField label="Cron" name="cron" path="cron" hint="5 fields, or 6 with seconds first; evaluated in the time zone below." {...common} />}
        {v.kind === 'every' && <TextField label="Every" name="every" path="every" hint='d, h, m, s in that order: "90s", "5m", "1h30m".' {...common} />}
        {v.kind === 'runAt' && <TextField label={`At (your time, ${userZone()})`} name="runAt" path="runAt" type="datetime-local" {...common} />}
        <TextField label="Time zone" name="timeZone" path="timeZone" hint="IANA name, e.g. Europe/Berlin: the cron's wall clock." {...common} />
        {v.kind === 'cron' && (
          <div className="pair">
            <SelectField label="DST gap" name="dstGap" path="dstGap" options={[['shift', 'shift to the gap\'s end'], ['skip', 'skip']]} {...common} />
            <SelectField label="DST overlap" name="dstOverlap" path="dstOverlap" options={[['first', 'first occurrence'], ['both', 'both']]} {...common} />
          </div>
        )}
        {v.kind !== 'runAt' && (
          <div className="pair">
            <TextField label={`Starts (your time, ${userZone()})`} name="startAt" path="startAt" type="datetime-local" {...common} />
            <TextField label={`Ends (your time, ${userZone()})`} name="endAt" path="endAt" type="datetime-local" {...common} />
            <TextField label="Max fires" name="maxFires" path="maxFires" inputMode="numeric" hint="Empty: no limit." {...common} />
          </div>
        )}
        {props.show?.calendars && (
          <div className="pair">
            <TextField label="Calendars" name="calendars" path="calendars" hint="Names of the app's calendars, separated by commas: their excluded days." {...common} />
            <SelectField
              label="On an excluded day"
              name="onExcluded"
              path="onExcluded"
              options={[
                ['skip', 'skip the fire (recorded missed)'],
                ['nextBusinessDay', 'move to the next business day'],
                ['previousBusinessDay', 'move to the previous business day'],
              ]}
              {...common}
            />
          </div>
        )}
        {props.scheduleExtra?.(v)}
      </fieldset>
      <fieldset>
        <legend>Callback</legend>
        <TextField label="URL" name="url" path="notifyHTTPParam.url" type="url" {...common} />
        <SelectField label="Method" name="method" path="notifyHTTPParam.method" options={METHODS.map((m) => [m, m] as const)} {...common} />
        <Field label="Headers" error={fields['notifyHTTPParam.header']} hint="One “Name: value” a line; repeat a name for several values.">
          {(id, d) => (
            <textarea id={id} name="headers" rows={3} value={v.headers} onChange={set('headers')} aria-invalid={!!fields['notifyHTTPParam.header']} aria-describedby={d} spellCheck={false} />
          )}
        </Field>
        <Field label="Body" error={fields['notifyHTTPParam.body']} hint="Sent verbatim.">
          {(id, d) => <textarea id={id} name="body" rows={3} value={v.body} onChange={set('body')} aria-invalid={!!fields['notifyHTTPParam.body']} aria-describedby={d} />}
        </Field>
        <TextField label="Timeout (ms)" name="timeoutMs" path="notifyHTTPParam.timeoutMs" inputMode="numeric" hint="Empty: the service's default." {...common} />
      </fieldset>
      <fieldset>
        <legend>Retries</legend>
        <div className="pair">
          <TextField label="Max attempts" name="maxAttempts" path="retryPolicy.maxAttempts" inputMode="numeric" hint="1 to 10." {...common} />
          <TextField label="Backoff (ms)" name="backoffMs" path="retryPolicy.backoffMs" inputMode="numeric" hint="Before the second attempt, doubling." {...common} />
        </div>
      </fieldset>
      <fieldset>
        <legend>Policies</legend>
        <div className="pair">
          <SelectField label="Misfire policy" name="misfirePolicy" path="misfirePolicy" options={[['fire_late', 'fire late'], ['skip', 'skip']]} hint="A fire found late." {...common} />
          <SelectField label="Overlap policy" name="overlapPolicy" path="overlapPolicy" options={[['allow', 'allow'], ['skip', 'skip'], ['buffer_one', 'buffer one']]} hint="A fire while the one before is still running." {...common} />
          <SelectField label="Catch-up policy" name="catchupPolicy" path="catchupPolicy" options={[['', 'as the misfire policy says'], ['all', 'all'], ['latest', 'latest'], ['none', 'none']]} {...common} />
          <TextField label="Catch-up window (ms)" name="catchupWindowMs" path="catchupWindowMs" inputMode="numeric" hint="Empty: the service's default." {...common} />
          <TextField label="Jitter (ms)" name="jitterMs" path="jitterMs" inputMode="numeric" {...common} />
        </div>
        <Field label="Auto spread" error={fields.autoSpread} hint="Move fires within the jitter instead of refusing a busy second.">
          {(id, d) => <input id={id} type="checkbox" name="autoSpread" checked={v.autoSpread} onChange={(e) => setV({ ...v, autoSpread: e.target.checked })} aria-describedby={d} />}
        </Field>
        <TextField label="Failure webhook URL" name="failureWebhookUrl" path="failureWebhook.url" type="url" hint="Where this timer's dead letters go; empty: the app's." {...common} />
        {props.show?.resultWebhook && (
          <TextField label="Result webhook URL" name="resultWebhookUrl" path="resultWebhook.url" type="url" hint="Where each final answer of the callback is posted, signed; empty: nowhere." {...common} />
        )}
      </fieldset>
      {props.extra}
      {placed.length > 0 && (
        <p className="banner error" role="alert">
          {placed.length === 1 ? '1 field needs' : `${placed.length} fields need`} a change: {placed.map((k) => FIELD_LABELS[k]).join(', ')}.
        </p>
      )}
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
