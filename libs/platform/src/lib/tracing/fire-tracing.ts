import { OnApplicationShutdown } from '@nestjs/common';

/** One span of a fire's trace. */
export interface FireSpan {
  /** The W3C `traceparent` naming this span: what a task message or a callback carries on. */
  readonly traceparent: string;
  setAttribute(name: string, value: string | number): void;
  /** Ends the span; an `error` marks it failed. */
  end(error?: string): void;
}

export type FireSpanKind = 'producer' | 'consumer' | 'client' | 'internal';

/**
 * Fire traces (docs/operations.md, "Tracing"): one trace per fire, started where its task message is
 * published and continued by the executor. Off unless TIMER_OTLP_ENDPOINT is set, and then `enabled` is
 * false: callers start no span at all (`tracing.enabled ? tracing.start(...) : undefined`), so a fire
 * pays one property read, and OpenTelemetry is never loaded.
 */
export abstract class Tracing implements OnApplicationShutdown {
  abstract readonly enabled: boolean;

  /**
   * A span of a fire: the root of a new trace when `parent` is undefined (or not a valid
   * `traceparent`), else a child of the span it names (another process's: the message's publisher).
   */
  abstract start(name: string, parent: string | undefined, kind: FireSpanKind, attributes: Record<string, string | number>): FireSpan;

  /** Exports the spans still queued (the role is stopping). */
  abstract onApplicationShutdown(): Promise<void>;
}

class NoTracing extends Tracing {
  readonly enabled = false;

  start(): FireSpan {
    throw new Error('tracing is off: check Tracing.enabled before starting a span');
  }

  async onApplicationShutdown(): Promise<void> {}
}

/** The tracing of a role without TIMER_OTLP_ENDPOINT, and of code built without Nest (tests, tools). */
export const NO_TRACING: Tracing = new NoTracing();
