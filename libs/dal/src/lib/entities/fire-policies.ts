/**
 * The fire policies of a timer (docs/behaviour.md, "Fire policies"): stored in `timers` and
 * `timer_versions`, validated by the api, applied by the executor. The values are public contract.
 */

/** `allow`: fires overlap freely; `skip`: a fire whose predecessor is in flight is skipped; `buffer_one`: one waits, further ones are skipped. */
export const OVERLAP_POLICIES = ['allow', 'skip', 'buffer_one'] as const;
export type OverlapPolicy = (typeof OVERLAP_POLICIES)[number];

/** `all`: every late fire within the window; `latest`: only the most recent late one; `none`: late fires are missed. */
export const CATCHUP_POLICIES = ['all', 'latest', 'none'] as const;
export type CatchupPolicy = (typeof CATCHUP_POLICIES)[number];

/** The largest `jitterMs` (1 h). */
export const JITTER_MAX_MS = 3_600_000;
/** The largest `catchupWindowMs` (7 days). */
export const CATCHUP_WINDOW_MAX_MS = 7 * 86_400_000;
