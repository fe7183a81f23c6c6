import { MouseEvent, ReactNode, useId, useState } from 'react';
import { navigate } from './router';
import { userZone, utcText, wallText } from './time';

/**
 * A time labelled with its zone: the viewer's unless `zone` names another (a timer's), UTC on hover.
 * The label is the IANA name, so two times on one page never read alike in different zones.
 */
export function Time({ ms, zone, children }: { ms: number | null | undefined; zone?: string; children?: ReactNode }) {
  if (ms === null || ms === undefined) return <span className="muted">none</span>;
  const z = zone ?? userZone();
  return (
    <span className="when">
      <time dateTime={new Date(ms).toISOString()} title={utcText(ms)}>
        {children ?? wallText(ms, z)}
      </time>{' '}
      <ZoneLabel zone={z} />
    </span>
  );
}

/** The name of a zone as a label, saying whether it is the viewer's. */
export function ZoneLabel({ zone }: { zone: string }) {
  const yours = zone === userZone();
  return (
    <span className="zone" title={yours ? 'your time zone' : 'not your time zone (the timer\'s)'}>
      {zone}
    </span>
  );
}

/** An in-app link: a real href (open in a new tab works), navigated without a reload. */
export function Link({ href, children, className }: { href: string; children: ReactNode; className?: string }) {
  const onClick = (e: MouseEvent<HTMLAnchorElement>) => {
    if (e.button !== 0 || e.metaKey || e.ctrlKey || e.shiftKey || e.altKey) return;
    e.preventDefault();
    navigate(href);
  };
  return (
    <a href={href} onClick={onClick} className={className}>
      {children}
    </a>
  );
}

/** A labelled form field with the API's message for it underneath (announced, linked by aria-describedby). */
export function Field(props: { label: string; error?: string; hint?: string; children: (id: string, describedBy: string | undefined) => ReactNode }) {
  const id = useId();
  const errorId = `${id}-error`;
  const hintId = `${id}-hint`;
  const describedBy = [props.error ? errorId : '', props.hint ? hintId : ''].filter(Boolean).join(' ') || undefined;
  return (
    <div className={props.error ? 'field invalid' : 'field'}>
      <label htmlFor={id}>{props.label}</label>
      {props.children(id, describedBy)}
      {props.hint && (
        <small id={hintId} className="hint">
          {props.hint}
        </small>
      )}
      {props.error && (
        <small id={errorId} className="field-error" role="alert">
          {props.error}
        </small>
      )}
    </div>
  );
}

/** A button whose action runs only after a second, explicit confirmation. */
export function ConfirmButton(props: { label: string; question: string; onConfirm: () => Promise<void> | void; danger?: boolean; disabled?: boolean }) {
  const [asking, setAsking] = useState(false);
  const [busy, setBusy] = useState(false);
  if (!asking) {
    return (
      <button type="button" className={props.danger ? 'danger' : undefined} disabled={props.disabled} onClick={() => setAsking(true)}>
        {props.label}
      </button>
    );
  }
  return (
    <span className="confirm" role="group" aria-label={props.question}>
      <span>{props.question}</span>
      <button
        type="button"
        className={props.danger ? 'danger' : 'primary'}
        disabled={busy}
        autoFocus
        onClick={async () => {
          setBusy(true);
          try {
            await props.onConfirm();
          } finally {
            setBusy(false);
            setAsking(false);
          }
        }}
      >
        Yes, {props.label.toLowerCase()}
      </button>
      <button type="button" onClick={() => setAsking(false)}>
        Cancel
      </button>
    </span>
  );
}

/** A message above the page's content: an error (alert) or a notice (status). */
function Banner({ text, kind }: { text: string | undefined; kind: 'error' | 'notice' }) {
  if (!text) return null;
  return (
    <p className={`banner ${kind}`} role={kind === 'error' ? 'alert' : 'status'}>
      {text}
    </p>
  );
}

export const ErrorBanner = ({ error }: { error: string | undefined }) => <Banner text={error} kind="error" />;
export const Notice = ({ text }: { text: string | undefined }) => <Banner text={text} kind="notice" />;

/** The header row of a list table. */
export function HeadRow({ columns }: { columns: readonly string[] }) {
  return (
    <thead>
      <tr>
        {columns.map((c) => (
          <th key={c} scope="col">
            {c}
          </th>
        ))}
      </tr>
    </thead>
  );
}

/** Previous/next paging with "Page n of m (total things)". */
export function Pager(props: { label: string; page: number; total: number; pageSize: number; noun: string; go: (page: number) => void; labels?: [string, string] }) {
  const pages = Math.max(1, Math.ceil(props.total / props.pageSize));
  const [back, forward] = props.labels ?? ['Previous', 'Next'];
  return (
    <nav className="pager" aria-label={props.label}>
      <button type="button" disabled={props.page <= 1} onClick={() => props.go(props.page - 1)}>
        {back}
      </button>
      <span>
        Page {props.page} of {pages} ({props.total} {props.noun})
      </span>
      <button type="button" disabled={props.page >= pages} onClick={() => props.go(props.page + 1)}>
        {forward}
      </button>
    </nav>
  );
}

/** One term of a definition list, left out when its value is null. */
export function Item({ label, children, when = true }: { label: string; children: ReactNode; when?: boolean }) {
  if (!when) return null;
  return (
    <>
      <dt>{label}</dt>
      <dd>{children}</dd>
    </>
  );
}

/** What a failed call tells the user: the API's own message, else a generic one. */
export function messageOf(e: unknown): string {
  if (e instanceof Error) return e.message;
  return 'the request failed';
}

/** `set` with `id` added (`on`) or removed: a row's checkbox in a selection. */
export function toggled<T>(set: ReadonlySet<T>, id: T, on: boolean): Set<T> {
  const next = new Set(set);
  if (on) next.add(id);
  else next.delete(id);
  return next;
}

/** What a calendar did to a fire (GET's marks, the preview's fields): skipped, or moved from the day the schedule gave. */
export function CalendarNote({ mark, zone }: { mark: { calendar?: string; excluded?: boolean; movedFrom?: number } | undefined; zone: string }) {
  if (!mark?.calendar) return null;
  if (mark.excluded) return <span className="calendar-mark"> skipped: excluded by calendar {mark.calendar}</span>;
  if (mark.movedFrom === undefined) return null;
  return (
    <span className="calendar-mark">
      {' '}
      moved from <Time ms={mark.movedFrom} zone={zone} /> (calendar {mark.calendar})
    </span>
  );
}
