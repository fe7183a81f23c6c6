import { useEffect, useState } from 'react';
import { Api } from '../api';
import { ErrorBanner, messageOf, Time } from '../components';

const HOUR_MS = 3_600_000;
/** Lateness percentiles are taken over this many of the latest succeeded fires (one page of records). */
const SAMPLE = 100;

interface Figures {
  from: number;
  to: number;
  succeeded: number;
  failed: number;
  missed: number;
  backlog: number;
  sampled: number;
  p50: number | null;
  p99: number | null;
}

function percentile(sorted: readonly number[], p: number): number | null {
  if (sorted.length === 0) return null;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

/**
 * The app's last hour from its fire records (the service's own ledger; no Prometheus): fires settled
 * per outcome, fires per second, lateness p50/p99 of the latest succeeded fires, and the backlog (fires
 * due but not settled yet: pending or running).
 */
async function lastHour(api: Api): Promise<Figures> {
  const to = Date.now();
  const from = to - HOUR_MS;
  const count = async (status: number) => (await api.records({ status, from, to, pageIndex: 1, pageSize: 1 })).total;
  const [succeeded, failed, missed, pending, running, sample] = await Promise.all([
    count(2),
    count(3),
    count(4),
    count(0),
    count(1),
    api.records({ status: 2, from, to, pageIndex: 1, pageSize: SAMPLE }),
  ]);
  const late = sample.data.map((r) => r.latenessMs).filter((v): v is number => v !== null).sort((a, b) => a - b);
  return { from, to, succeeded, failed, missed, backlog: pending + running, sampled: late.length, p50: percentile(late, 50), p99: percentile(late, 99) };
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

export function Overview({ api }: { api: Api }) {
  const [f, setF] = useState<Figures>();
  const [error, setError] = useState<string>();
  useEffect(() => {
    let live = true;
    lastHour(api)
      .then((v) => live && setF(v))
      .catch((e: unknown) => live && setError(messageOf(e)));
    return () => {
      live = false;
    };
  }, [api]);

  return (
    <main>
      <h1>Overview of {api.app}</h1>
      <ErrorBanner error={error} />
      {!f && !error && <p className="muted">Loading…</p>}
      {f && (
        <>
          <p className="muted">
            The last hour, <Time ms={f.from} /> to <Time ms={f.to} />, from the app&apos;s fire records.
          </p>
          <dl className="figures">
            <Figure label="Fires per second" value={((f.succeeded + f.failed) / (HOUR_MS / 1000)).toFixed(2)} hint={`${f.succeeded + f.failed} delivered or failed`} />
            <Figure label="Succeeded" value={String(f.succeeded)} />
            <Figure label="Failed" value={String(f.failed)} />
            <Figure label="Missed" value={String(f.missed)} />
            <Figure label="Backlog" value={String(f.backlog)} hint="due, not settled yet" />
            <Figure label="Lateness p50" value={f.p50 === null ? 'n/a' : `${f.p50} ms`} hint={`of the latest ${f.sampled} succeeded`} />
            <Figure label="Lateness p99" value={f.p99 === null ? 'n/a' : `${f.p99} ms`} hint={`of the latest ${f.sampled} succeeded`} />
          </dl>
        </>
      )}
    </main>
  );
}
