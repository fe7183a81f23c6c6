import { FormEvent, useCallback, useEffect, useState } from 'react';
import { Api, DeadLetter, LetterSelection } from '../api';
import { ConfirmButton, ErrorBanner, Link, messageOf, Notice, Pager, Time, toggled } from '../components';
import { hrefOf } from '../router';

const PAGE_SIZE = 20;

/** What a letter's last attempt said: the HTTP status and/or the error text, else the reason. */
function lastError(l: DeadLetter): string {
  const status = l.httpStatus !== null ? `HTTP ${l.httpStatus}` : '';
  // The executor's error often is that status already ("HTTP 500"): say it once.
  const parts = [l.error?.startsWith(status) ? '' : status, l.error ?? ''].filter(Boolean);
  return parts.length > 0 ? parts.join(': ') : l.reason;
}

/** The app's dead letters (latest run time first): select, then replay or purge, each confirmed. */
export function DeadLetters({ api }: { api: Api }) {
  const [page, setPage] = useState(1);
  const [rows, setRows] = useState<DeadLetter[]>();
  const [total, setTotal] = useState(0);
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  const [timerId, setTimerId] = useState('');
  const [error, setError] = useState<string>();
  const [notice, setNotice] = useState<string>();
  const [tick, setTick] = useState(0);
  const reload = useCallback(() => setTick((n) => n + 1), []);

  useEffect(() => {
    let live = true;
    api
      .deadLetters({ pageIndex: page, pageSize: PAGE_SIZE })
      .then((r) => {
        if (!live) return;
        setRows(r.data);
        setTotal(r.total);
        // A selection only holds letters still listed on this page.
        setSelected((s) => new Set(r.data.map((l) => l.fireId).filter((id) => s.has(id))));
      })
      .catch((e: unknown) => live && setError(messageOf(e)));
    return () => {
      live = false;
    };
  }, [api, page, tick]);

  const act = async (what: 'replay' | 'purge', sel: LetterSelection) => {
    setError(undefined);
    setNotice(undefined);
    try {
      if (what === 'replay') {
        const r = await api.replayDeadLetters(sel);
        const parts = [`Replayed ${r.replayed}${r.fireIds.length > 0 ? ` (${r.fireIds.join(', ')})` : ''}.`];
        if (r.notFound.length > 0) parts.push(`Not dead letters (any more): ${r.notFound.join(', ')}.`);
        if (r.remaining > 0) parts.push(`${r.remaining} remaining: replay again for the rest.`);
        setNotice(parts.join(' '));
      } else {
        const r = await api.purgeDeadLetters(sel);
        setNotice(`Purged ${r.purged}; their failed records stay.`);
      }
      setSelected(new Set());
      reload();
    } catch (e) {
      setError(messageOf(e));
    }
  };

  const toggle = (id: string, on: boolean) => setSelected((s) => toggled(s, id, on));
  const allOnPage = !!rows && rows.length > 0 && rows.every((l) => selected.has(l.fireId));
  const fireIds = [...selected];
  const timer = timerId.trim();
  const noSubmit = (e: FormEvent) => e.preventDefault();

  return (
    <main>
      <div className="title-row">
        <h1>Dead letters of {api.app}</h1>
        <button type="button" onClick={reload}>
          Refresh
        </button>
      </div>
      <p className="muted">Fires whose delivery failed for good. Replay delivers each once more (attempt 1 again); purge removes it from this list, its failed record stays.</p>
      <ErrorBanner error={error} />
      <Notice text={notice} />
      <div className="actions" role="group" aria-label="Selected dead letters">
        <span>{selected.size} selected</span>
        <ConfirmButton label="Replay selected" question={`Replay ${selected.size} dead letter(s)?`} disabled={selected.size === 0} onConfirm={() => act('replay', { fireIds })} />
        <ConfirmButton label="Purge selected" question={`Purge ${selected.size} dead letter(s)?`} danger disabled={selected.size === 0} onConfirm={() => act('purge', { fireIds })} />
      </div>
      <form className="filters" onSubmit={noSubmit} aria-label="Dead letters of one timer">
        <label>
          Timer id
          <input name="timerId" inputMode="numeric" pattern="\d{1,20}" value={timerId} onChange={(e) => setTimerId(e.target.value)} />
        </label>
        <ConfirmButton label="Replay all of timer" question={`Replay every dead letter of timer ${timer}?`} disabled={!/^\d{1,20}$/.test(timer)} onConfirm={() => act('replay', { timerId: timer })} />
        <ConfirmButton label="Purge all of timer" question={`Purge every dead letter of timer ${timer}?`} danger disabled={!/^\d{1,20}$/.test(timer)} onConfirm={() => act('purge', { timerId: timer })} />
      </form>
      {rows && rows.length === 0 && <p className="muted">No dead letters.</p>}
      {rows && rows.length > 0 && (
        <table className="list letters">
          <thead>
            <tr>
              <th scope="col">
                <input
                  type="checkbox"
                  aria-label="Select every dead letter on this page"
                  checked={allOnPage}
                  onChange={(e) => setSelected(e.target.checked ? new Set(rows.map((l) => l.fireId)) : new Set())}
                />
              </th>
              {['Fire', 'Timer', 'Run time', 'Failed at', 'Attempts', 'Last error'].map((c) => (
                <th key={c} scope="col">
                  {c}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {rows.map((l) => (
              <tr key={l.fireId} data-fire-id={l.fireId}>
                <td data-label="Select">
                  <input type="checkbox" aria-label={`Select fire ${l.fireId}`} checked={selected.has(l.fireId)} onChange={(e) => toggle(l.fireId, e.target.checked)} />
                </td>
                <td data-label="Fire">
                  <code>{l.fireId}</code>
                </td>
                <td data-label="Timer">
                  <Link href={hrefOf({ page: 'timer', id: l.timerId })}>{l.timerId}</Link>
                </td>
                <td data-label="Run time">
                  <Time ms={l.runAt} />
                </td>
                <td data-label="Failed at">
                  <Time ms={l.failedAt} />
                </td>
                <td data-label="Attempts">{l.attempts}</td>
                <td data-label="Last error" title={l.reason}>
                  {lastError(l)}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Pager label="Pages" page={page} total={total} pageSize={PAGE_SIZE} noun="dead letters" go={setPage} />
    </main>
  );
}

