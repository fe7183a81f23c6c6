import { FormEvent, useCallback, useEffect, useId, useState } from 'react';
import { Api, currentVersionOf, TASK_STATUS, TaskRecord, Timer, TIMER_STATUS, TimerVersion } from '../api';
import { CalendarNote, ConfirmButton, ErrorBanner, HeadRow, Item, Link, messageOf, Notice, Pager, Time } from '../components';
import { hrefOf, navigate } from '../router';
import { localInputToIso, previewRows, userZone, zonedText } from '../time';
import { headerLines, patchInput, TimerForm, valuesOf } from '../timer-form';
import type { Extensions } from '../timer-values';
import { answerOf, keepsAnswers } from '../answers';
import { definitionOf, diffVersions } from '../versions';
import { scheduleOf } from './timers';

const RECORDS_PAGE = 10;
const LIVE_REFRESH_MS = 2_000;
const VERSIONS_SHOWN = 20;
/** After a fire's time, when the timer is read again for the next fires (the fire's row is written by then). */
const AFTER_FIRE_MS = 1_500;

/** The upcoming fires in the timer's zone and in the viewer's, each labelled, offset changes marked. */
/** A fire a calendar excluded or moved, as GET marks it (where the service has calendars). */
interface CalendarMark {
  at: number;
  calendar: string;
  excluded?: boolean;
  movedFrom?: number;
}

function Preview({ timer }: { timer: Timer }) {
  const times = timer.nextFireTimes ?? [];
  const marks = new Map(((timer as { calendar?: CalendarMark[] }).calendar ?? []).map((m) => [m.at, m]));
  if (times.length === 0) return <p className="muted">No upcoming fires.</p>;
  return (
    <ol className="preview">
      {previewRows(times, timer.timeZone).map((r) => (
        <li key={r.ms}>
          <Time ms={r.ms} zone={timer.timeZone}>
            {zonedText(r.ms, timer.timeZone)}
          </Time>
          {timer.timeZone !== userZone() && (
            <span className="also">
              {' '}
              = <Time ms={r.ms} />
            </span>
          )}
          <CalendarNote mark={marks.get(r.ms)} zone={timer.timeZone} />
          {r.offsetChanged && (
            <span className="dst" title={`the offset of ${timer.timeZone} changes before this fire`}>
              {' '}
              offset change {r.offsetChanged.from} → {r.offsetChanged.to}
            </span>
          )}
        </li>
      ))}
    </ol>
  );
}

/**
 * The timer's versions, newest first: any two compared field by field, and "restore this version"
 * (a PUT of that version's definition against the current version: a new version, nothing lost).
 */
function Versions({ api, timer, onRestored }: { api: Api; timer: Timer; onRestored: (text: string) => Promise<void> }) {
  const [rows, setRows] = useState<TimerVersion[]>();
  const [total, setTotal] = useState(0);
  const [error, setError] = useState<string>();
  const [older, setOlder] = useState<number>();
  const [newer, setNewer] = useState<number>();
  const uid = useId();

  useEffect(() => {
    let on = true;
    api
      .versions(timer.id, 1, VERSIONS_SHOWN)
      .then((r) => {
        if (!on) return;
        setRows(r.data);
        setTotal(r.total);
        setNewer(r.data[0]?.version);
        setOlder(r.data[1]?.version ?? r.data[0]?.version);
      })
      .catch((e: unknown) => on && setError(messageOf(e)));
    return () => {
      on = false;
    };
  }, [api, timer.id, timer.version]);

  if (!rows) return <ErrorBanner error={error} />;
  const a = rows.find((r) => r.version === older);
  const b = rows.find((r) => r.version === newer);
  const diff = a && b ? diffVersions(a, b) : [];
  const pick = (label: string, name: string, value: number | undefined, set: (n: number) => void) => (
    <span className="pick">
      <label htmlFor={`${uid}-${name}`}>{label}</label>
      <select id={`${uid}-${name}`} name={name} value={value} onChange={(e) => set(Number(e.target.value))}>
        {rows.map((r) => (
          <option key={r.version} value={r.version}>
            {r.version} ({r.change})
          </option>
        ))}
      </select>
    </span>
  );
  return (
    <section aria-labelledby="versions-h">
      <h2 id="versions-h">Versions</h2>
      <ErrorBanner error={error} />
      <table className="list versions">
        <HeadRow columns={['Version', 'Change', 'Written']} />
        <tbody>
          {rows.map((r) => (
            <tr key={r.version} data-version={r.version}>
              <td data-label="Version">{r.version === timer.version ? `${r.version} (current)` : r.version}</td>
              <td data-label="Change">{r.change}</td>
              <td data-label="Written">
                <Time ms={r.changedAt} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {total > rows.length && <p className="muted">The {rows.length} latest of {total} versions.</p>}
      <form className="filters" aria-label="Compare versions" onSubmit={(e) => e.preventDefault()}>
        {pick('Version', 'older', older, setOlder)}
        {pick('Compared with', 'newer', newer, setNewer)}
        {a && a.version !== timer.version && (
          <ConfirmButton
            label={`Restore version ${a.version}`}
            question={`Replace the definition with version ${a.version}'s? It is saved as a new version.`}
            onConfirm={async () => {
              try {
                const r = await api.replaceTimer(timer.id, timer.version, definitionOf(a));
                await onRestored(`Version ${a.version} restored as version ${r.version}.`);
              } catch (e) {
                setError(messageOf(e));
              }
            }}
          />
        )}
      </form>
      {a && b && a.version !== b.version && (
        <table className="list diff" aria-label={`Changes from version ${a.version} to version ${b.version}`}>
          <HeadRow columns={['Field', `Version ${a.version}`, `Version ${b.version}`]} />
          <tbody>
            {diff.length === 0 && (
              <tr>
                <td colSpan={3}>The same definition.</td>
              </tr>
            )}
            {diff.map((d) => (
              <tr key={d.field} data-field={d.field}>
                <th scope="row" data-label="Field">
                  {d.field}
                </th>
                <td data-label={`Version ${a.version}`} className="before">
                  <pre>{d.before || '—'}</pre>
                </td>
                <td data-label={`Version ${b.version}`} className="after">
                  <pre>{d.after || '—'}</pre>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

/** Lateness (first attempt after runAt) of the records shown, one bar each, oldest left. */
function LatenessChart({ records }: { records: TaskRecord[] }) {
  const shown = records.filter((r) => r.latenessMs !== null).reverse();
  if (shown.length === 0) return null;
  const max = Math.max(100, ...shown.map((r) => r.latenessMs ?? 0));
  const w = 12;
  return (
    <figure className="chart">
      <svg viewBox={`0 0 ${Math.max(shown.length, RECORDS_PAGE) * w} 60`} preserveAspectRatio="none" role="img" aria-label={`lateness of the ${shown.length} fires shown, up to ${max} ms`}>
        {shown.map((r, i) => {
          const h = Math.max(1, ((r.latenessMs ?? 0) / max) * 58);
          return (
            <rect key={r.fireId} x={i * w + 1} y={60 - h} width={w - 2} height={h} className={`bar s-${TASK_STATUS[r.status]}`}>
              <title>{`${r.fireId}: ${r.latenessMs} ms late`}</title>
            </rect>
          );
        })}
      </svg>
      <figcaption>Lateness of the fires shown (max {max} ms)</figcaption>
    </figure>
  );
}

/** A kept answer: its status and size at a glance, the headers and the body excerpt opened on request. */
function AnswerCell({ record }: { record: TaskRecord }) {
  const a = answerOf(record);
  if (!a) return <span className="muted">none</span>;
  const headers = Object.entries(a.headers).map(([k, v]) => `${k}: ${v}`);
  return (
    <details className="answer">
      <summary>
        HTTP {a.status}
        {a.body ? `, ${a.body.length}${a.truncated ? '+' : ''} characters` : a.truncated ? ', body not kept' : ', no body'}
      </summary>
      {headers.length > 0 && <pre className="headers">{headers.join('\n')}</pre>}
      {a.body && <pre className="body">{a.body}</pre>}
      {a.truncated && <p className="muted">The body was longer: only its start is kept.</p>}
    </details>
  );
}

function Records({ api, timer, refreshKey }: { api: Api; timer: Timer; refreshKey: number }) {
  const [status, setStatus] = useState('');
  const [from, setFrom] = useState('');
  const [to, setTo] = useState('');
  const [applied, setApplied] = useState<{ status?: number; from?: number; to?: number }>({});
  const [page, setPage] = useState(1);
  const [live, setLive] = useState(true);
  const [rows, setRows] = useState<TaskRecord[]>();
  const [total, setTotal] = useState(0);
  const [error, setError] = useState<string>();
  const [tick, setTick] = useState(0);

  useEffect(() => {
    if (!live) return;
    const t = window.setInterval(() => setTick((n) => n + 1), LIVE_REFRESH_MS);
    return () => window.clearInterval(t);
  }, [live]);

  useEffect(() => {
    let on = true;
    api
      .records({ timerID: timer.id, ...applied, pageIndex: page, pageSize: RECORDS_PAGE })
      .then((r) => {
        if (!on) return;
        setRows(r.data);
        setTotal(r.total);
        setError(undefined);
      })
      .catch((e: unknown) => on && setError(messageOf(e)));
    return () => {
      on = false;
    };
  }, [api, timer.id, applied, page, tick, refreshKey]);

  const submit = (e: FormEvent) => {
    e.preventDefault();
    const ms = (v: string) => {
      const iso = localInputToIso(v);
      return iso ? Date.parse(iso) : undefined;
    };
    setPage(1);
    setApplied({ status: status ? Number(status) : undefined, from: ms(from), to: ms(to) });
  };

  const answers = !!rows && keepsAnswers(rows);
  return (
    <section aria-labelledby="records-h">
      <h2 id="records-h">Records</h2>
      <form className="filters" onSubmit={submit} aria-label="Filter records">
        <label>
          Status
          <select name="recordStatus" value={status} onChange={(e) => setStatus(e.target.value)}>
            <option value="">any</option>
            {Object.entries(TASK_STATUS).map(([k, label]) => (
              <option key={k} value={k}>
                {label}
              </option>
            ))}
          </select>
        </label>
        <label>
          From ({userZone()})
          <input name="from" type="datetime-local" value={from} onChange={(e) => setFrom(e.target.value)} />
        </label>
        <label>
          To ({userZone()})
          <input name="to" type="datetime-local" value={to} onChange={(e) => setTo(e.target.value)} />
        </label>
        <button type="submit">Filter</button>
        <label className="inline">
          <input type="checkbox" name="live" checked={live} onChange={(e) => setLive(e.target.checked)} /> Live
        </label>
      </form>
      <ErrorBanner error={error} />
      {rows && <LatenessChart records={rows} />}
      {rows && rows.length === 0 && <p className="muted">No records yet.</p>}
      {rows && rows.length > 0 && (
        <table className="list records">
          <HeadRow columns={['Fire', 'Status', 'Attempts', 'HTTP', 'Late (ms)', 'Took (ms)', 'Error', ...(answers ? ['Answer'] : [])]} />
          <tbody>
            {rows.map((r) => (
              <tr key={r.fireId} data-fire-id={r.fireId}>
                <td data-label="Fire">
                  <Time ms={r.runAt} />
                </td>
                <td data-label="Status">
                  <span className={`status s-${TASK_STATUS[r.status]}`}>{TASK_STATUS[r.status]}</span>
                </td>
                <td data-label="Attempts">{r.attempt}</td>
                <td data-label="HTTP">{r.httpStatus ?? ''}</td>
                <td data-label="Late (ms)">{r.latenessMs ?? ''}</td>
                <td data-label="Took (ms)">{r.costMs ?? ''}</td>
                <td data-label="Error">{r.error ?? ''}</td>
                {answers && (
                  <td data-label="Answer">
                    <AnswerCell record={r} />
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Pager label="Record pages" page={page} total={total} pageSize={RECORDS_PAGE} noun="records" go={setPage} labels={['Newer', 'Older']} />
    </section>
  );
}

export function TimerPage({ api, id }: { api: Api; id: string }) {
  const [timer, setTimer] = useState<Timer>();
  const [error, setError] = useState<string>();
  const [notice, setNotice] = useState<string>();
  const [editing, setEditing] = useState(false);
  const [conflict, setConflict] = useState<number>();
  const [formKey, setFormKey] = useState(0);
  const [recordsKey, setRecordsKey] = useState(0);

  const [loads, setLoads] = useState(0);

  const load = useCallback(async () => {
    try {
      setTimer(await api.getTimer(id));
      setLoads((n) => n + 1);
      setError(undefined);
    } catch (e) {
      setError(messageOf(e));
    }
  }, [api, id]);

  useEffect(() => {
    void load();
  }, [load]);

  // The upcoming fires move on after each fire: read the timer again just after the first one's time
  // (and again after each read that still lists it).
  const nextFire = timer?.status === 2 ? timer.nextFireTimes?.[0] : undefined;
  useEffect(() => {
    if (nextFire === undefined) return;
    const t = window.setTimeout(() => void load(), Math.max(0, nextFire - Date.now()) + AFTER_FIRE_MS);
    return () => window.clearTimeout(t);
  }, [nextFire, loads, load]);

  const act = async (what: () => Promise<string | undefined>) => {
    setNotice(undefined);
    setError(undefined);
    try {
      setNotice(await what());
      await load();
    } catch (e) {
      setError(messageOf(e));
    }
  };

  if (!timer) {
    return (
      <main>
        <ErrorBanner error={error} />
        {!error && <p className="muted">Loading…</p>}
      </main>
    );
  }

  const enabled = timer.status === 2;
  const ext = timer as Timer & Extensions;
  return (
    <main>
      <p>
        <Link href={hrefOf({ page: 'timers' })}>← Timers</Link>
      </p>
      <div className="title-row">
        <h1>{timer.name}</h1>
        <span className={`status s-${TIMER_STATUS[timer.status]}`}>{TIMER_STATUS[timer.status]}</span>
      </div>
      <ErrorBanner error={error} />
      <Notice text={notice} />
      <div className="actions" aria-label="Timer actions">
        {enabled ? (
          <ConfirmButton label="Disable" question="Disable this timer? Its pending fires are removed." onConfirm={() => act(async () => (await api.disable(timer.id), 'Disabled.'))} />
        ) : (
          <ConfirmButton label="Enable" question="Enable this timer?" disabled={timer.status === 3} onConfirm={() => act(async () => (await api.enable(timer.id), 'Enabled.'))} />
        )}
        <ConfirmButton
          label="Run now"
          question="Fire this timer once now?"
          onConfirm={() =>
            act(async () => {
              const r = await api.runNow(timer.id);
              setRecordsKey((n) => n + 1);
              return `Fire ${r.fireId} queued.`;
            })
          }
        />
        <ConfirmButton
          label="Delete"
          danger
          question="Delete this timer for good?"
          onConfirm={async () => {
            try {
              await api.deleteTimer(timer.id);
              navigate(hrefOf({ page: 'timers' }));
            } catch (e) {
              setError(messageOf(e));
            }
          }}
        />
        {!editing && (
          <button type="button" onClick={() => setEditing(true)}>
            Edit
          </button>
        )}
      </div>

      <div className="columns">
        <section aria-labelledby="def-h">
          <h2 id="def-h">Definition (version {timer.version})</h2>
          {editing ? (
            <>
              {conflict !== undefined && (
                <div className="banner conflict" role="alert">
                  <p>
                    Someone else changed this timer while you were editing: it is now at version {conflict}, your edit was made against version {timer.version}. Nothing was
                    saved.
                  </p>
                  <button
                    type="button"
                    onClick={async () => {
                      await load();
                      setConflict(undefined);
                      setFormKey((n) => n + 1);
                    }}
                  >
                    Reload the current version
                  </button>
                </div>
              )}
              <TimerForm
                key={`${timer.version}-${formKey}`}
                initial={valuesOf(timer)}
                show={{ calendars: 'calendars' in timer, resultWebhook: 'resultWebhook' in timer }}
                submitLabel="Save changes"
                submit={async (v) => {
                  try {
                    const r = await api.patchTimer(timer.id, timer.version, patchInput(valuesOf(timer), v, timer));
                    setEditing(false);
                    setConflict(undefined);
                    setNotice(r.changed ? `Saved as version ${r.version}.` : 'Nothing changed.');
                    await load();
                  } catch (e) {
                    const current = currentVersionOf(e);
                    if (current !== undefined) {
                      setConflict(current > 0 ? current : timer.version + 1);
                      throw new Error('Version conflict: reload the current version, then make your change again.');
                    }
                    throw e;
                  }
                }}
                onCancel={() => {
                  setEditing(false);
                  setConflict(undefined);
                }}
              />
            </>
          ) : (
            <dl className="definition">
              <Item label="Id">{timer.id}</Item>
              <Item label="Schedule">{scheduleOf(timer)}</Item>
              <Item label="Time zone">{timer.timeZone}</Item>
              <Item label="DST" when={timer.cron !== null}>
                gap: {timer.dstGap}, overlap: {timer.dstOverlap}
              </Item>
              <Item label="Starts" when={timer.startAt !== null}>
                <Time ms={timer.startAt} />
              </Item>
              <Item label="Ends" when={timer.endAt !== null}>
                <Time ms={timer.endAt} />
              </Item>
              <Item label="Max fires" when={timer.maxFires !== null}>
                {timer.maxFires}
              </Item>
              <Item label="Callback">
                <code>{timer.notifyHTTPParam.method}</code> <span className="url">{timer.notifyHTTPParam.url}</span>
              </Item>
              <Item label="Headers" when={Object.keys(timer.notifyHTTPParam.header ?? {}).length > 0}>
                <pre className="headers">{headerLines(timer.notifyHTTPParam.header)}</pre>
              </Item>
              <Item label="Body" when={timer.notifyHTTPParam.body !== undefined}>
                <pre>{timer.notifyHTTPParam.body}</pre>
              </Item>
              <Item label="Timeout" when={timer.notifyHTTPParam.timeoutMs !== undefined}>
                {timer.notifyHTTPParam.timeoutMs} ms
              </Item>
              <Item label="Retries">
                {timer.retryPolicy.maxAttempts} attempts, {timer.retryPolicy.backoffMs} ms backoff
              </Item>
              <Item label="Policies">
                misfire {timer.misfirePolicy}, overlap {timer.overlapPolicy}, catch-up {timer.catchupPolicy ?? 'by misfire'}
                {timer.catchupWindowMs !== null ? ` within ${timer.catchupWindowMs} ms` : ''}, jitter {timer.jitterMs} ms{timer.autoSpread ? ', auto spread' : ''}
              </Item>
              <Item label="Calendars" when={(ext.calendars ?? []).length > 0}>
                {(ext.calendars ?? []).join(', ')}; on an excluded day: {ext.onExcluded}
              </Item>
              <Item label="Result webhook" when={!!ext.resultWebhook}>
                <span className="url">{ext.resultWebhook?.url}</span>
              </Item>
              <Item label="Failure webhook" when={timer.failureWebhook !== null}>
                <span className="url">{timer.failureWebhook?.url}</span>
              </Item>
              <Item label="Created">
                <Time ms={timer.createdAt} />
              </Item>
            </dl>
          )}
        </section>
        <section aria-labelledby="preview-h">
          <h2 id="preview-h">Upcoming fires</h2>
          <Preview timer={timer} />
        </section>
      </div>
      <Versions
        api={api}
        timer={timer}
        onRestored={async (text) => {
          setEditing(false);
          setNotice(text);
          await load();
        }}
      />
      <Records api={api} timer={timer} refreshKey={recordsKey} />
    </main>
  );
}
