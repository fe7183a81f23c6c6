import { FormEvent, useEffect, useState } from 'react';
import { Api, TASK_STATUS, Timer, TIMER_STATUS } from '../api';
import { ErrorBanner, HeadRow, Link, messageOf, Pager, Time } from '../components';
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

  useEffect(() => {
    let live = true;
    setError(undefined);
    api
      .listTimers({ name: name || undefined, status: status ? Number(status) : undefined, pageIndex: page, pageSize: PAGE_SIZE })
      .then((r) => {
        if (!live) return;
        setRows(r.data);
        setTotal(r.total);
      })
      .catch((e: unknown) => live && setError(messageOf(e)));
    return () => {
      live = false;
    };
  }, [api, name, status, page]);

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
      {rows && rows.length === 0 && <p className="muted">No timers match.</p>}
      {rows && rows.length > 0 && (
        <table className="list">
          <HeadRow columns={['Name', 'Schedule', 'Status', 'Next fire', 'Last outcome']} />
          <tbody>
            {rows.map((t) => (
              <tr key={t.id}>
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
    </main>
  );
}
