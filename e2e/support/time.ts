export const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, Math.max(0, ms)));

// Timers run on the monotonic clock and may wake a millisecond before the wall clock reaches the target.
export async function sleepUntil(epochMs: number): Promise<void> {
  while (Date.now() < epochMs) await sleep(epochMs - Date.now());
}

/** The first whole second at least `leadMs` from now. */
export const nextSecond = (leadMs = 0): number => Math.ceil((Date.now() + leadMs) / 1000) * 1000;

/** Polls `probe` until it is truthy or `timeoutMs` passed; returns the last value either way. */
export async function pollUntil<T>(probe: () => T | Promise<T>, timeoutMs: number, everyMs = 250): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (v || Date.now() >= deadline) return v;
    await sleep(everyMs);
  }
}

/** Runs `fn` now and keeps its outcome, so a test can await it later without an unhandled rejection. */
export function started<T>(fn: () => Promise<T>): () => Promise<T> {
  const p = fn().then(
    (value) => ({ ok: true as const, value }),
    (error: unknown) => ({ ok: false as const, error }),
  );
  return async () => {
    const r = await p;
    if (!r.ok) throw r.error;
    return r.value;
  };
}
