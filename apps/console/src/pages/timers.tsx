import { FormEvent, useEffect, useState } from 'react';
import { Api, TASK_STATUS, Timer, TIMER_STATUS } from '../api';
import { ConfirmButton, ErrorBanner, Link, messageOf, Notice, Pager, Time, toggled } from '../components';
import { BASE, hrefOf, navigate } from '../router';

const PAGE_SIZE = 20;

/** One schedule in a few words: the cron, the interval or the one-shot time. */
export function scheduleOf(t: Timer) {
  if (t.cron) return <code>{t.cron}</code>;
  if (t.every) return <span>every {t.every}</span>;
  return (
    <span>
      once at <Time ms={t.runAt} />
    </span>
  );
}

/** The next fire (GET's preview) and the last outcome (latest settled record) of one timer, read per row. */
function RowExtras({ api, timer }: { api: Api; timer: Timer }) {
  const [next, setNext] = useState<number | null>();
  const [last, setLast] = useState<string>();
  useEffect(() => {
    let live = true;
    void api
      .getTimer(timer.id)
      .then((t) => live && setNext(timer.status === 2 ? (t.nextFireTimes?.[0] ?? null) : null))
      .catch(() => live && setNext(null));
    // The latest settled fire of the last few (the latest one may still be pending or running).
    void api
      .records({ timerID: timer.id, pageIndex: 1, pageSize: 5 })
      .then((r) => {
        const latest = r.data.find((t) => t.status >= 2) ?? r.data[0];
        if (live) setLast(latest ? TASK_STATUS[latest.status] : 'none yet');
      })
      .catch(() => live && setLast('?'));
    return () => {
      live = false;
    };
  }, [api, timer.id, timer.status, timer.version]);
  return (
    <>
      <td data-label="Next fire">{next === undefined ? '…' : <Time ms={next} />}</td>
      <td data-label="Last outcome">{last ? <span className={`status s-${last.replace(/\W/g, '')}`}>{last}</span> : '…'}</td>
    </>
  );
}

type BulkAction = 'enable' | 'disable' | 'delete';
const BULK_DONE: Record<BulkAction, string> = { enable: 'Enabled', disable: 'Disabled', delete: 'Deleted' };
/** Requests in flight at once during a bulk action: a few, so a large selection does not crowd out other users. */
const BULK_PARALLEL = 4;

/** Runs `fn` over `items`, `BULK_PARALLEL` at a time; the failures, each with its message. */
async function eachLimited<T>(items: readonly T[], fn: (item: T) => Promise<void>): Promise<{ item: T; message: string }[]> {
  const failed: { item: T; message: string }[] = [];
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const item = items[next++];
      try {
        await fn(item);
      } catch (e) {
        failed.push({ item, message: messageOf(e) });
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(BULK_PARALLEL, items.length) }, worker));
  return failed;
}

export function Timers({ api }: { api: Api }) {
  const params = new URLSearchParams(window.location.search);
  const name = params.get('name') ?? '';
  const status = params.get('status') ?? '';
  const page = Math.max(1, Number(params.get('page')) || 1);
  const [search, setSearch] = useState(name);
  const [filter, setFilter] = useState(status);
  const [rows, setRows] = useState<Timer[]>();
  const [total, setTotal] = useState(0);
  const [error, setError] = useState<string>();
  const [notice, setNotice] = useState<string>();
  const [selected, setSelected] = useState<ReadonlySet<number>>(new Set());
  const [scope, setScope] = useState<'selected' | 'filtered'>('selected');
  const [tick, setTick] = useState(0);

  useEffect(() => {
    let live = true;
    setError(undefined);
    api
      .listTimers({ name: name || undefined, status: status ? Number(status) : undefined, pageIndex: page, pageSize: PAGE_SIZE })
      .then((r) => {
        if (!live) return;
        setRows(r.data);
        setTotal(r.total);
        setSelected((s) => new Set(r.data.map((t) => t.id).filter((id) => s.has(id))));
      })
      .catch((e: unknown) => live && setError(messageOf(e)));
    return () => {
      live = false;
    };
  }, [api, name, status, page, tick]);

  const go = (q: { name?: string; status?: string; page?: number }) => {
    const next = new URLSearchParams();
    if (q.name) next.set('name', q.name);
    if (q.status) next.set('status', q.status);
    if (q.page && q.page > 1) next.set('page', String(q.page));
    const qs = next.toString();
    navigate(`${BASE}/timers${qs ? `?${qs}` : ''}`);
  };
  const submit = (e: FormEvent) => {
    e.preventDefault();
    go({ name: search.trim(), status: filter });
  };

  /** Every timer the filter matches, page by page (the list route's largest page). */
  const allMatching = async (): Promise<number[]> => {
    const ids: number[] = [];
    for (let p = 1; ; p++) {
      const r = await api.listTimers({ name: name || undefined, status: status ? Number(status) : undefined, pageIndex: p, pageSize: 100 });
      ids.push(...r.data.map((t) => t.id));
      if (r.data.length < 100 || ids.length >= r.total) return ids;
    }
  };

  const bulk = async (action: BulkAction) => {
    setError(undefined);
    setNotice(undefined);
    try {
      const ids = scope === 'selected' ? [...selected] : await allMatching();
      const failed = await eachLimited(ids, (id) => (action === 'enable' ? api.enable(id) : action === 'disable' ? api.disable(id) : api.deleteTimer(id)));
      setNotice(`${BULK_DONE[action]} ${ids.length - failed.length} of ${ids.length} timer(s).`);
      if (failed.length > 0) setError(`Refused: ${failed.map((f) => `timer ${f.item}: ${f.message}`).join('; ')}`);
      setSelected(new Set());
      setTick((n) => n + 1);
    } catch (e) {
      setError(messageOf(e));
    }
  };

  const toggle = (id: number, on: boolean) => setSelected((s) => toggled(s, id, on));
  const count = scope === 'selected' ? selected.size : total;
  const what = scope === 'selected' ? `${selected.size} selected timer(s)` : `all ${total} timer(s) matching the filter`;
  const allOnPage = !!rows && rows.length > 0 && rows.every((t) => selected.has(t.id));

  return (
    <main>
      <div className="title-row">
        <h1>Timers of {api.app}</h1>
        <Link href={hrefOf({ page: 'new' })} className="button primary">
          New timer
        </Link>
      </div>
      <form className="filters" onSubmit={submit} role="search" aria-label="Filter timers">
        <label>
          Name contains
          <input name="search" type="search" value={search} onChange={(e) => setSearch(e.target.value)} />
        </label>
        <label>
          Status
          <select name="status" value={filter} onChange={(e) => setFilter(e.target.value)}>
            <option value="">any</option>
            <option value="2">enabled</option>
            <option value="1">disabled</option>
            <option value="3">completed</option>
          </select>
        </label>
        <button type="submit">Filter</button>
      </form>
      <ErrorBanner error={error} />
      <Notice text={notice} />
      <div className="actions bulk" role="group" aria-label="Act on timers">
        <label className="inline">
          <input type="radio" name="scope" checked={scope === 'selected'} onChange={() => setScope('selected')} /> Selected ({selected.size})
        </label>
        <label className="inline">
          <input type="radio" name="scope" checked={scope === 'filtered'} onChange={() => setScope('filtered')} /> All matching the filter ({total})
        </label>
        <ConfirmButton label="Enable" question={`Enable ${what}?`} disabled={count === 0} onConfirm={() => bulk('enable')} />
        <ConfirmButton label="Disable" question={`Disable ${what}? Their pending fires are removed.`} disabled={count === 0} onConfirm={() => bulk('disable')} />
        <ConfirmButton label="Delete" danger question={`Delete ${what} for good?`} disabled={count === 0} onConfirm={() => bulk('delete')} />
      </div>
      {rows && rows.length === 0 && <p className="muted">No timers match.</p>}
      {rows && rows.length > 0 && (
        <table className="list timers">
          <thead>
            <tr>
              <th scope="col">
                <input
                  type="checkbox"
                  aria-label="Select every timer on this page"
                  checked={allOnPage}
                  onChange={(e) => setSelected(e.target.checked ? new Set(rows.map((t) => t.id)) : new Set())}
                />
              </th>
              {['Name', 'Schedule', 'Status', 'Next fire', 'Last outcome'].map((c) => (
                <th key={c} scope="col">
                  {c}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {rows.map((t) => (
              <tr key={t.id} data-timer-id={t.id}>
                <td data-label="Select">
                  <input type="checkbox" aria-label={`Select ${t.name}`} checked={selected.has(t.id)} onChange={(e) => toggle(t.id, e.target.checked)} />
                </td>
                <td data-label="Name">
                  <Link href={hrefOf({ page: 'timer', id: String(t.id) })}>{t.name}</Link>
                </td>
                <td data-label="Schedule">
                  {scheduleOf(t)} <span className="muted">{t.timeZone}</span>
                </td>
                <td data-label="Status">
                  <span className={`status s-${TIMER_STATUS[t.status]}`}>{TIMER_STATUS[t.status]}</span>
                </td>
                <RowExtras api={api} timer={t} />
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Pager label="Pages" page={page} total={total} pageSize={PAGE_SIZE} noun="timers" go={(p) => go({ name, status, page: p })} />
      <AppPause api={api} />
    </main>
  );
}

/**
 * The API's pause is the app's: every timer of it stops firing (fires are recorded missed) until the
 * resume, and none is delivered late. A single timer's pause is its disable.
 */
function AppPause({ api }: { api: Api }) {
  const [error, setError] = useState<string>();
  const [notice, setNotice] = useState<string>();
  const act = async (what: 'pause' | 'resume') => {
    setError(undefined);
    try {
      const r = what === 'pause' ? await api.pauseApp() : await api.resumeApp();
      setNotice(r.paused ? `App ${api.app} is paused (its fires are recorded missed until it is resumed).` : `App ${api.app} runs${r.missedFires ? `; ${r.missedFires} paused fire(s) recorded missed` : ''}.`);
    } catch (e) {
      setError(messageOf(e));
    }
  };
  return (
    <section aria-labelledby="app-pause-h">
      <h2 id="app-pause-h">The whole app</h2>
      <ErrorBanner error={error} />
      <Notice text={notice} />
      <div className="actions">
        <ConfirmButton label="Pause app" question={`Pause every timer of ${api.app}?`} onConfirm={() => act('pause')} />
        <ConfirmButton label="Resume app" question={`Resume the timers of ${api.app}?`} onConfirm={() => act('resume')} />
      </div>
    </section>
  );
}
