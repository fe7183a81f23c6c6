import type { PeekedMessage } from '@timer/pulsar';
import { bucketsForTriggers, type LiveTriggerSlots } from '@timer/redis';
import type { MinuteBucketsRow } from './buckets.service';
import type { TopicRow } from './ops.service';

function table(rows: string[][]): string {
  const widths = rows[0].map((_, i) => Math.max(...rows.map((r) => r[i].length)));
  return rows.map((r) => r.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ')).join('\n');
}

const rate = (n: number) => n.toFixed(1);

/** One line per topic and one per subscription under it. */
export function formatTopics(rows: TopicRow[], at = new Date()): string {
  const out: string[][] = [['topic / subscription', 'in/s', 'out/s', 'backlog', 'unacked', 'consumers', 'producers', 'stored']];
  for (const t of rows) {
    if (!t.exists) {
      out.push([t.local, '-', '-', '-', '-', '-', '-', 'not created yet']);
      continue;
    }
    out.push([t.local, rate(t.rateIn), rate(t.rateOut), '', '', '', String(t.producers), `${(t.storageBytes / 1024).toFixed(0)} KiB`]);
    for (const s of t.subscriptions) {
      out.push([`  ${s.name} (${s.type ?? '?'})`, '', rate(s.rateOut), String(s.backlog), String(s.unacked), String(s.consumers), '', '']);
    }
  }
  return `${at.toISOString()}\n${table(out)}`;
}

export function formatPeek(topic: string, messages: PeekedMessage[]): string {
  if (messages.length === 0) return `${topic}: no messages`;
  return messages
    .map((m, i) => {
      const props = Object.entries(m.properties).map(([k, v]) => `${k}=${v}`).join(' ');
      const when = m.publishTime ? new Date(m.publishTime).toISOString() : '?';
      return `#${i + 1} ${m.entryId} published ${when}${m.key ? ` key=${m.key}` : ''}${props ? ` ${props}` : ''}\n   ${m.payload.toString('utf8')}`;
    })
    .join('\n');
}

/** One line per minute: its recorded bucket count (one slice each) and how many of them are done. */
export function formatBuckets(rows: MinuteBucketsRow[]): string {
  const out: string[][] = [['minute (UTC)', 'buckets', 'slices done']];
  for (const r of rows) {
    out.push([new Date(r.minute).toISOString().slice(0, 16), r.buckets === null ? 'not recorded' : String(r.buckets), r.done === null ? '-' : `${r.done}/${r.buckets}`]);
  }
  return table(out);
}

/** What the live triggers let the migrator give a minute (docs/scaling.md, "Buckets per minute"). */
export function formatTriggers(live: LiveTriggerSlots | null): string {
  if (live === null) return 'live triggers: none reported its slots lately: minutes keep the default count';
  return `live triggers: ${live.processes} (${live.slots} slots): a minute gets at most ${bucketsForTriggers(live)} buckets (never fewer than TIMER_SLICE_BUCKETS, never more than TIMER_SLICE_BUCKETS_MAX)`;
}
