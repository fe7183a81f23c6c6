/**
 * At most this long a heavy app's fire due at an instant waits for the other apps' calls of that
 * instant to be answered: a light app with slow callbacks holds the heavy one back by this, not by its calls.
 */
export const LIGHT_FIRST_MAX_MS = 50;

/**
 * The calls of light apps' fires due at one instant, from their wake-up to their answer, which the
 * fires of a heavy app (AppFairShare.heavy) due at the same instant wait for before their own calls.
 * A turn's head start was not enough: the receivers and the executor then worked on both apps' requests
 * together, and the light app's calls were received later than alone in the seconds where the heavy
 * app's fires were due with them (docs/benchmarks.md, "Measurements behind the code").
 */
export class LightFirst {
  /** Light calls out by instant, and who waits for them to be answered. */
  private readonly instants = new Map<number, { out: number; idle: (() => void)[] }>();

  /** A light fire due at `at` woke; the returned function (idempotent) says its call was answered or it ended without one. */
  begin(at: number): () => void {
    let calls = this.instants.get(at);
    if (!calls) {
      calls = { out: 0, idle: [] };
      this.instants.set(at, calls);
    }
    calls.out++;
    const of = calls;
    let live = true;
    return () => {
      if (!live) return;
      live = false;
      if (--of.out > 0) return;
      if (this.instants.get(at) === of) this.instants.delete(at);
      for (const resume of of.idle.splice(0)) resume();
    };
  }

  /** Resolves once the light fires due at `at` that woke are answered (at once when none is out), or after `maxMs`. */
  answered(at: number, maxMs = LIGHT_FIRST_MAX_MS): Promise<void> {
    const calls = this.instants.get(at);
    if (!calls) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, maxMs);
      calls.idle.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  /** Resolves once every light call out now is answered, or after `maxMs`. */
  async allAnswered(maxMs = LIGHT_FIRST_MAX_MS): Promise<void> {
    if (this.instants.size === 0) return;
    await Promise.all([...this.instants.keys()].map((at) => this.answered(at, maxMs)));
  }

  /** Instants with light calls out (bounded: each entry goes when its last call is answered). */
  get size(): number {
    return this.instants.size;
  }
}
