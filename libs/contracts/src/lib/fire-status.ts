/**
 * The status of a fire's record, the one vocabulary of it: the number stored in `tasks.status` and
 * served by the api, the name shown by the console and timerctl, and what it means. The client keeps
 * its own copy (it ships alone), which a test holds against the served OpenAPI document.
 */
export const FIRE_STATUSES = [
  { value: 0, name: 'pending', meaning: 'waiting for its time, a retry or a hand-back' },
  { value: 1, name: 'running', meaning: 'claimed by an executor: its callback is under way' },
  { value: 2, name: 'succeeded', meaning: 'its callback answered 2xx' },
  { value: 3, name: 'failed', meaning: 'its attempts are spent or the answer was not retryable: a dead letter' },
  { value: 4, name: 'missed', meaning: 'never to be delivered (misfire policy, pause, maintenance, superseded), with the reason recorded' },
] as const;

/** The fire statuses by name, for code. */
export const FireStatus = { Pending: 0, Running: 1, Succeeded: 2, Failed: 3, Missed: 4 } as const satisfies Record<string, (typeof FIRE_STATUSES)[number]['value']>;
export type FireStatusValue = (typeof FIRE_STATUSES)[number]['value'];
export type FireStatusName = (typeof FIRE_STATUSES)[number]['name'];

/** Every status number, in order. */
export const FIRE_STATUS_VALUES: readonly FireStatusValue[] = FIRE_STATUSES.map((s) => s.value);

/** `0 pending: <meaning>; 1 running: ...`: how the api's OpenAPI document describes them (the client's test reads it back). */
export const FIRE_STATUS_DESCRIPTION = FIRE_STATUSES.map((s) => `${s.value} ${s.name}: ${s.meaning}`).join('; ');

/** `0 (pending), 1 (running), ...`: how the api's messages list them. */
export const FIRE_STATUS_CHOICES = FIRE_STATUSES.map((s) => `${s.value} (${s.name})`).join(', ');
