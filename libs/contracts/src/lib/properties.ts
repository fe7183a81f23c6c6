/**
 * Pulsar message property names the roles and the ops tool read and write. Properties carry what is
 * not part of the payload: correlation, routing hints and the reason a dead letter failed.
 */
export const MESSAGE_PROPERTIES = {
  /** The fire id (`<timerId>-<runAtMs>`) of every one-fire task message: the correlation id in logs and tools. */
  fireId: 'x-timer-fire-id',
  /** On a task message carrying many fires (`{tasks: [...]}`): the first and last fire id, and the count. */
  firstFireId: 'x-timer-first-fire-id',
  lastFireId: 'x-timer-last-fire-id',
  fireCount: 'x-timer-fires',
  /** `1` on a message the executor re-published to look at a held fire again (not a new duplicate). */
  recheck: 'x-timer-recheck',
  /** `1` on the task message of a run now: delivered however late, never judged by the misfire policy. */
  runNow: 'x-timer-run-now',
  /**
   * `api` on the task message of a dead letter replayed through `POST /api/app/v1/dlq/replay` (with
   * `x-timer-run-now: 1`): the row was reopened by the api, the claim fences it like any first attempt.
   */
  replay: 'x-timer-replay',
  /**
   * How many times an executor handed this task message back because its app held its share of the
   * handlers (fair delivery): sets the next hand-back's delay; absent on the first delivery.
   */
  deferrals: 'x-timer-deferrals',
  /**
   * The W3C trace context of a one-fire task message (tracing on: docs/operations.md, "Tracing"): the
   * span that published the fire, which the executor's spans continue. A fire of a batch carries it in its
   * payload entry instead (`TaskMessage.traceparent`), as every fire does, so retries keep their trace.
   */
  traceparent: 'traceparent',
  /** Set by `ops replay` to the dead-letter topic a message came from. */
  replayedFrom: 'replayed-from',
  /** Dead letters: the last error, HTTP status, attempts made and why no further attempt is made. */
  error: 'x-timer-error',
  httpStatus: 'x-timer-http-status',
  attempts: 'x-timer-attempts',
  reason: 'x-timer-reason',
} as const;
