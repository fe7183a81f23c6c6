/**
 * UTC offsets of an IANA time zone from `Intl` alone (no tz library), and the time line cut into
 * spans of constant offset.
 *
 * Assumption (the Temporal polyfill steps by two weeks): a zone changes its offset at most once per
 * {@link CHUNK_SAMPLE_MS} (6 days); transitions fall on whole seconds (tzdata). Checked over the 418
 * zones of Node 20's ICU from 1900 to 2100 sampling daily: the closest transitions are 7 days apart
 * (America/Recife 2000, Asia/Gaza's predicted Ramadan changes).
 */

/** A day: how far back a transition still counts as the `start` of the first piece. */
export const SAMPLE_STEP_MS = 86_400_000;
/** Sampling step when looking for offset transitions within a chunk. */
export const CHUNK_SAMPLE_MS = 6 * SAMPLE_STEP_MS;

const formatters = new Map<string, Intl.DateTimeFormat>();
/** The zone's canonical name, per name asked: `resolvedOptions()` builds a fresh object each call (docs/benchmarks.md, "Measurements behind the code"). */
const resolvedZones = new Map<string, string>();

function formatter(zone: string): Intl.DateTimeFormat {
  let f = formatters.get(zone);
  if (!f) {
    // Throws RangeError for a zone Intl does not know. Only the offset ("GMT+05:45"): a third of the
    // cost of formatting the whole date into parts.
    f = new Intl.DateTimeFormat('en-US', { timeZone: zone, timeZoneName: 'longOffset' });
    formatters.set(zone, f);
  }
  return f;
}

/** True when `zone` is an IANA zone this runtime's Intl knows. */
export function isKnownTimeZone(zone: string): boolean {
  if (typeof zone !== 'string' || zone.length === 0) return false;
  try {
    formatter(zone);
    return true;
  } catch {
    return false;
  }
}

/**
 * A piece [from, to) of the time line with one UTC offset. `start` is the transition that began
 * the offset (it may precede `from`: a span of constant offset is yielded in several pieces), or
 * undefined when no transition lies within {@link SAMPLE_STEP_MS} before the first piece;
 * `prevOffset` is the offset before `start` (equal to `offset` when `start` is undefined).
 */
export interface OffsetPiece {
  from: number;
  to: number;
  offset: number;
  start: number | undefined;
  prevOffset: number;
}

/** Longest piece {@link ZoneClock.pieces} yields, so a lazy consumer never waits on a long scan. */
const MAX_PIECE_MS = 32 * SAMPLE_STEP_MS;

/** The end of a `longOffset` text: "GMT", "GMT+02:00", "GMT-15:56:08". */
const OFFSET = /GMT(?:([+-])(\d{2}):(\d{2})(?::(\d{2}))?)?$/;

/** Length of the stretches whose transitions are computed (and cached) at once. */
export const CHUNK_MS = 32 * SAMPLE_STEP_MS;
/** Most chunks kept over all zones (about 100 bytes each); the cache is dropped whole beyond it. */
const MAX_CHUNKS = 200_000;

/** The offset at a chunk's start and the transitions in (start, start + CHUNK_MS], ascending. */
interface Chunk {
  offset: number;
  transitions: { at: number; offset: number }[];
}

/**
 * Transitions per zone and chunk, shared by every ZoneClock: a zone's offsets are computed once per
 * 32-day stretch (7 samples, and a bisection to the second per transition: about 0.05 ms), so a preview of a rare
 * cron reads only the stretches around its fires and every later evaluation is arithmetic.
 */
const chunks = new Map<string, Map<number, Chunk>>();
let chunkCount = 0;

/** Offsets of one zone from the shared per-chunk cache of transitions. */
export class ZoneClock {
  private readonly fixedOffset: number | undefined;
  private readonly fmt: Intl.DateTimeFormat | undefined;
  private readonly zoneChunks: Map<number, Chunk> | undefined;

  constructor(readonly zone: string) {
    const f = formatter(zone);
    let resolved = resolvedZones.get(zone);
    if (resolved === undefined) resolvedZones.set(zone, (resolved = f.resolvedOptions().timeZone));
    if (resolved === 'UTC' || resolved === 'Etc/UTC' || resolved === 'Etc/GMT') {
      this.fixedOffset = 0;
    } else {
      this.fmt = f;
      let m = chunks.get(resolved);
      if (!m) chunks.set(resolved, (m = new Map()));
      this.zoneChunks = m;
    }
  }

  /** Offset (local wall time minus UTC, ms) in force at instant `t`. */
  offsetAt(t: number): number {
    if (this.fixedOffset !== undefined) return this.fixedOffset;
    const c = this.chunk(Math.floor(t / CHUNK_MS));
    let offset = c.offset;
    for (const tr of c.transitions) {
      if (tr.at > t) break;
      offset = tr.offset;
    }
    return offset;
  }

  /** The last transition at or before `t` and after `t - lookback` (with the offset before it), if any. */
  lastTransition(t: number, lookback: number): { at: number; prevOffset: number } | undefined {
    if (this.fixedOffset !== undefined) return undefined;
    for (let k = Math.floor(t / CHUNK_MS); k >= Math.floor((t - lookback) / CHUNK_MS) - 1; k--) {
      const c = this.chunk(k);
      for (let i = c.transitions.length - 1; i >= 0; i--) {
        const tr = c.transitions[i];
        if (tr.at > t) continue;
        if (tr.at <= t - lookback) return undefined;
        return { at: tr.at, prevOffset: i > 0 ? c.transitions[i - 1].offset : c.offset };
      }
    }
    return undefined;
  }

  /** Transitions in (from, to], ascending. */
  private *transitionsIn(from: number, to: number): Generator<{ at: number; offset: number }> {
    for (let k = Math.floor(from / CHUNK_MS) - 1; k * CHUNK_MS < to; k++) {
      for (const tr of this.chunk(k).transitions) if (tr.at > from && tr.at <= to) yield tr;
    }
  }

  /**
   * The pieces of constant offset covering [from, to) exactly, in order, computed lazily. `start` of
   * the first piece is a transition within {@link SAMPLE_STEP_MS} before `from`, if any.
   */
  *pieces(from: number, to: number): Generator<OffsetPiece> {
    if (!(from < to)) return;
    if (this.fixedOffset !== undefined) {
      yield { from, to, offset: this.fixedOffset, start: undefined, prevOffset: this.fixedOffset };
      return;
    }
    let offset = this.offsetAt(from);
    const before = this.lastTransition(from, SAMPLE_STEP_MS);
    let start = before?.at;
    let prevOffset = before ? before.prevOffset : offset;
    let pieceFrom = from;
    // Bounded pieces, so a lazy consumer never makes this compute years it will not read.
    for (let edge = from; edge < to; ) {
      const next = Math.min(edge + MAX_PIECE_MS, to);
      for (const tr of this.transitionsIn(edge, next)) {
        if (tr.at >= to) break;
        if (tr.at > pieceFrom) yield { from: pieceFrom, to: tr.at, offset, start, prevOffset };
        pieceFrom = tr.at;
        prevOffset = offset;
        offset = tr.offset;
        start = tr.at;
      }
      edge = next;
      if (edge < to && edge - pieceFrom >= MAX_PIECE_MS) {
        yield { from: pieceFrom, to: edge, offset, start, prevOffset };
        pieceFrom = edge;
      }
    }
    yield { from: pieceFrom, to, offset, start, prevOffset };
  }

  private chunk(k: number): Chunk {
    const m = this.zoneChunks!;
    let c = m.get(k);
    if (c) return c;
    if (chunkCount >= MAX_CHUNKS) {
      for (const z of chunks.values()) z.clear();
      chunkCount = 0;
    }
    const from = k * CHUNK_MS;
    c = { offset: this.rawOffset(from), transitions: [] };
    let offset = c.offset;
    for (let x = from; x < from + CHUNK_MS; x += CHUNK_SAMPLE_MS) {
      const y = Math.min(x + CHUNK_SAMPLE_MS, from + CHUNK_MS);
      const o = this.rawOffset(y);
      if (o !== offset) {
        c.transitions.push({ at: this.transitionIn(x, y, offset), offset: o });
        offset = o;
      }
    }
    m.set(k, c);
    chunkCount++;
    return c;
  }

  /** The offset at `t` from Intl (whole seconds). */
  private rawOffset(t: number): number {
    const text = this.fmt!.format(Math.floor(t / 1000) * 1000);
    const m = OFFSET.exec(text);
    if (!m) throw new Error(`unexpected offset ${JSON.stringify(text)} of zone ${this.zone}`);
    if (m[1] === undefined) return 0; // "GMT"
    const ms = (Number(m[2]) * 3600 + Number(m[3]) * 60 + Number(m[4] ?? 0)) * 1000;
    return m[1] === '-' ? -ms : ms;
  }

  /** First whole second in (x, y] whose offset differs from `offset` (one exists: the offset at y differs). */
  private transitionIn(x: number, y: number, offset: number): number {
    let lo = Math.floor(x / 1000);
    let hi = Math.floor(y / 1000);
    while (hi - lo > 1) {
      const mid = Math.floor((lo + hi) / 2);
      if (this.rawOffset(mid * 1000) === offset) lo = mid;
      else hi = mid;
    }
    return hi * 1000;
  }
}
