import { useCallback, useEffect, useState } from 'react';
import { Api, Overview as OverviewData } from '../api';
import { ErrorBanner, HeadRow, messageOf, Time } from '../components';
import { localText, userZone } from '../time';

type Bucket = OverviewData['buckets'][number];

const W = 600;
const H = 120;
const OUTCOMES = ['delivered', 'failed', 'missed', 'open'] as const;

const ms = (v: number | null) => (v === null ? 'n/a' : `${v} ms`);
/** A minute's start in the viewer's zone, named (the charts' titles and labels). */
const hhmm = (at: number) => `${new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' }).format(at)} ${userZone()}`;

/** The smallest of 1, 2, 5 x 10^n at or above `v`: a readable top of a y axis. */
function niceMax(v: number): number {
  if (v <= 0) return 1;
  const p = 10 ** Math.floor(Math.log10(v));
  return ([1, 2, 5, 10].find((m) => m * p >= v) ?? 10) * p;
}

/** Fires per second of each bucket, stacked by outcome (delivered, failed, missed, open). */
function FiresChart({ o }: { o: OverviewData }) {
  const n = o.buckets.length;
  const top = niceMax(Math.max(0, ...o.buckets.map((b) => b.firesPerSecond)));
  const bw = W / n;
  const peak = o.buckets.reduce((a, b) => (b.firesPerSecond > a.firesPerSecond ? b : a), o.buckets[0]);
  return (
    <figure className="chart overview-chart" data-chart="fires">
      <svg viewBox={`0 0 ${W} ${H}`} preserveAspectRatio="none" role="img" aria-label={`Fires per second per minute, ${n} minutes; peak ${peak?.firesPerSecond ?? 0} per second at ${peak ? hhmm(peak.start) : ''}`}>
        {o.buckets.map((b, i) => {
          let y = H;
          return OUTCOMES.map((k) => {
            const h = b.fires === 0 ? 0 : (b[k] / b.fires) * (b.firesPerSecond / top) * H;
            y -= h;
            return h > 0 ? (
              <rect key={`${b.start}-${k}`} x={i * bw + 0.5} y={y} width={Math.max(0.5, bw - 1)} height={h} className={`bar o-${k}`}>
                <title>{`${hhmm(b.start)}: ${b.firesPerSecond}/s (${b.delivered} delivered, ${b.failed} failed, ${b.missed} missed, ${b.open} open)`}</title>
              </rect>
            ) : null;
          });
        })}
      </svg>
      <figcaption>
        Fires per second, each minute (top {top}/s): <span className="key o-delivered">delivered</span> <span className="key o-failed">failed</span>{' '}
        <span className="key o-missed">missed</span> <span className="key o-open">open</span>
      </figcaption>
    </figure>
  );
}

/** Lateness p50 and p99 of each minute's delivered fires, as two lines (a gap where none was delivered). */
function LatenessChart({ o }: { o: OverviewData }) {
  const n = o.buckets.length;
  const top = niceMax(Math.max(0, ...o.buckets.map((b) => b.latenessP99Ms ?? 0)));
  const x = (i: number) => (i + 0.5) * (W / n);
  const y = (v: number) => H - (Math.max(0, v) / top) * (H - 4);
  const path = (pick: (b: Bucket) => number | null) => {
    let d = '';
    let pen = false;
    o.buckets.forEach((b, i) => {
      const v = pick(b);
      if (v === null) {
        pen = false;
        return;
      }
      d += `${pen ? 'L' : 'M'}${x(i).toFixed(1)} ${y(v).toFixed(1)} `;
      pen = true;
    });
    return d.trim();
  };
  const dots = (pick: (b: Bucket) => number | null, cls: string) =>
    o.buckets.map((b, i) => {
      const v = pick(b);
      return v === null ? null : (
        <circle key={`${cls}-${b.start}`} cx={x(i)} cy={y(v)} r={2} className={cls}>
          <title>{`${hhmm(b.start)}: ${cls === 'p99' ? 'p99' : 'p50'} ${v} ms`}</title>
        </circle>
      );
    });
  return (
    <figure className="chart overview-chart" data-chart="lateness">
      <svg viewBox={`0 0 ${W} ${H}`} preserveAspectRatio="none" role="img" aria-label={`Lateness p50 and p99 per minute, up to ${top} ms; overall p50 ${ms(o.totals.latenessP50Ms)}, p99 ${ms(o.totals.latenessP99Ms)}`}>
        <path d={path((b) => b.latenessP99Ms)} className="line p99" />
        <path d={path((b) => b.latenessP50Ms)} className="line p50" />
        {dots((b) => b.latenessP99Ms, 'p99')}
        {dots((b) => b.latenessP50Ms, 'p50')}
      </svg>
      <figcaption>
        Lateness of delivered fires, each minute (top {top} ms): <span className="key p50">p50</span> <span className="key p99">p99</span>
      </figcaption>
    </figure>
  );
}

function Figure({ label, value, hint }: { label: string; value: string; hint?: string }) {
  return (
    <div className="figure" data-figure={label}>
      <dt>{label}</dt>
      <dd>
        <strong>{value}</strong>
        {hint && <small className="muted"> {hint}</small>}
      </dd>
    </div>
  );
}

/** The minutes with fires as a table: the charts' numbers, for keyboards and screen readers. */
function MinuteTable({ o }: { o: OverviewData }) {
  const rows = o.buckets.filter((b) => b.fires > 0);
  if (rows.length === 0) return <p className="muted">No fires in this hour.</p>;
  return (
    <table className="list minutes">
      <HeadRow columns={['Minute', 'Fires/s', 'Delivered', 'Failed', 'Missed', 'Open', 'p50', 'p99']} />
      <tbody>
        {rows.map((b) => (
          <tr key={b.start}>
            <td data-label="Minute">
              <Time ms={b.start} />
            </td>
            <td data-label="Fires/s">{b.firesPerSecond}</td>
            <td data-label="Delivered">{b.delivered}</td>
            <td data-label="Failed">{b.failed}</td>
            <td data-label="Missed">{b.missed}</td>
            <td data-label="Open">{b.open}</td>
            <td data-label="p50">{ms(b.latenessP50Ms)}</td>
            <td data-label="p99">{ms(b.latenessP99Ms)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/**
 * The last hour per minute from the api's overview (the service's own task rows; no Prometheus): fires
 * per second by outcome, lateness p50/p99, missed and failed counts, and the backlog.
 */
export function Overview({ api }: { api: Api }) {
  const [allApps, setAllApps] = useState(false);
  const [o, setO] = useState<OverviewData>();
  const [error, setError] = useState<string>();
  const [tick, setTick] = useState(0);
  const refresh = useCallback(() => setTick((n) => n + 1), []);

  useEffect(() => {
    let live = true;
    api
      .overview(allApps)
      .then((v) => {
        if (!live) return;
        setO(v);
        setError(undefined);
      })
      .catch((e: unknown) => live && setError(messageOf(e)));
    return () => {
      live = false;
    };
  }, [api, allApps, tick]);

  const t = o?.totals;
  return (
    <main>
      <div className="title-row">
        <h1>Overview of {o?.app === null ? 'all apps' : api.app}</h1>
        <div className="actions">
          {api.isAdmin && (
            <label className="inline">
              <input type="checkbox" name="allApps" checked={allApps} onChange={(e) => setAllApps(e.target.checked)} /> All apps
            </label>
          )}
          <button type="button" onClick={refresh}>
            Refresh
          </button>
        </div>
      </div>
      <ErrorBanner error={error} />
      {!o && !error && <p className="muted">Loading…</p>}
      {o && t && (
        <>
          <p className="muted">
            The last hour, <Time ms={o.from} /> to <Time ms={o.to} />, per minute of the fires&apos; scheduled time, from the service&apos;s own fire records.
          </p>
          <dl className="figures">
            <Figure label="Fires per second" value={String(t.firesPerSecond)} hint={`${t.fires} fires in the hour`} />
            <Figure label="Delivered" value={String(t.delivered)} />
            <Figure label="Failed" value={String(t.failed)} hint="dead-lettered" />
            <Figure label="Missed" value={String(t.missed)} />
            <Figure label="Backlog" value={`${o.backlog.pending}${o.backlog.capped ? '+' : ''}`} hint={o.backlog.oldestRunAt === null ? 'no fire waiting past its time' : `pending past their time, oldest due ${localText(o.backlog.oldestRunAt)} ${userZone()}`} />
            <Figure label="Lateness p50" value={ms(t.latenessP50Ms)} hint={`of ${t.latenessFires} delivered${t.latenessCapped ? ' (the latest)' : ''}`} />
            <Figure label="Lateness p99" value={ms(t.latenessP99Ms)} hint={`of ${t.latenessFires} delivered${t.latenessCapped ? ' (the latest)' : ''}`} />
          </dl>
          <section aria-labelledby="charts-h">
            <h2 id="charts-h">Per minute</h2>
            <FiresChart o={o} />
            <LatenessChart o={o} />
            <details>
              <summary>The minutes with fires as a table</summary>
              <MinuteTable o={o} />
            </details>
          </section>
        </>
      )}
    </main>
  );
}
