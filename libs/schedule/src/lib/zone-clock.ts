/**
 * UTC offsets of an IANA time zone from `Intl` alone (no tz library), and the time line cut into
 * spans of constant offset.
 *
 * Assumption (shared with the Temporal polyfill, which steps by two weeks): a zone changes its
 * offset at most once per {@link SAMPLE_STEP_MS}; transitions fall on whole seconds (tzdata).
 */

/** Sampling step when looking for offset transitions. */
export const SAMPLE_STEP_MS = 86_400_000;

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatter(zone: string): Intl.DateTimeFormat {
  let f = formatters.get(zone);
  if (!f) {
    // Throws RangeError for a zone Intl does not know.
    f = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      era: 'short',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
    });
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

/** Offsets of one zone, memoised per instance (create one per computation). */
export class ZoneClock {
  private readonly fixedOffset: number | undefined;
  private readonly fmt: Intl.DateTimeFormat | undefined;
  private readonly memo = new Map<number, number>();

  constructor(readonly zone: string) {
    const f = formatter(zone);
    const resolved = f.resolvedOptions().timeZone;
    if (resolved === 'UTC' || resolved === 'Etc/UTC' || resolved === 'Etc/GMT') {
      this.fixedOffset = 0;
    } else {
      this.fmt = f;
    }
  }

  /** Offset (local wall time minus UTC, ms) in force at instant `t`. */
  offsetAt(t: number): number {
    if (this.fixedOffset !== undefined) return this.fixedOffset;
    const second = Math.floor(t / 1000);
    const cached = this.memo.get(second);
    if (cached !== undefined) return cached;
    const parts = this.fmt!.formatToParts(second * 1000);
    let year = 0;
    let month = 1;
    let day = 1;
    let hour = 0;
    let minute = 0;
    let sec = 0;
    let bc = false;
    for (const p of parts) {
      switch (p.type) {
        case 'year':
          year = Number(p.value);
          break;
        case 'month':
          month = Number(p.value);
          break;
        case 'day':
          day = Number(p.value);
          break;
        case 'hour':
          hour = Number(p.value);
          break;
        case 'minute':
          minute = Number(p.value);
          break;
        case 'second':
          sec = Number(p.value);
          break;
        case 'era':
          bc = p.value === 'BC' || p.value === 'B';
          break;
      }
    }
    const d = new Date(0);
    d.setUTCFullYear(bc ? 1 - year : year, month - 1, day);
    d.setUTCHours(hour, minute, sec, 0);
    const offset = d.getTime() - second * 1000;
    if (this.memo.size > 10_000) this.memo.clear();
    this.memo.set(second, offset);
    return offset;
  }

  /** The pieces of constant offset covering [from, to) exactly, in order, computed lazily. */
  *pieces(from: number, to: number): Generator<OffsetPiece> {
    if (!(from < to)) return;
    if (this.fixedOffset !== undefined) {
      yield { from, to, offset: this.fixedOffset, start: undefined, prevOffset: this.fixedOffset };
      return;
    }
    let x = from - SAMPLE_STEP_MS;
    let start: number | undefined;
    let offset = this.offsetAt(x);
    let prevOffset = offset;
    let pieceFrom = from;
    while (x < to) {
      const y = Math.min(x + SAMPLE_STEP_MS, to);
      if (this.offsetAt(y) !== offset) {
        const t = this.transitionIn(x, y, offset);
        if (t < to) {
          if (t > pieceFrom) yield { from: pieceFrom, to: t, offset, start, prevOffset };
          pieceFrom = Math.max(pieceFrom, t);
          prevOffset = offset;
          offset = this.offsetAt(t);
          start = t;
          x = t;
          continue;
        }
      }
      x = y;
      if (x - pieceFrom >= MAX_PIECE_MS && x < to) {
        yield { from: pieceFrom, to: x, offset, start, prevOffset };
        pieceFrom = x;
      }
    }
    yield { from: pieceFrom, to, offset, start, prevOffset };
  }

  /** First whole second in (x, y] whose offset differs from `offset` (one exists: offsetAt(y) differs). */
  private transitionIn(x: number, y: number, offset: number): number {
    let lo = Math.floor(x / 1000);
    let hi = Math.floor(y / 1000);
    while (hi - lo > 1) {
      const mid = Math.floor((lo + hi) / 2);
      if (this.offsetAt(mid * 1000) === offset) lo = mid;
      else hi = mid;
    }
    return hi * 1000;
  }
}
