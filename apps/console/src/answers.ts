import type { TaskRecord } from './api';

/** What a receiver answered, as records carry it per attempt (`response`, where the service keeps answers). */
export interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
  truncated: boolean;
}

type AttemptWithAnswer = { attempt: number; response?: Answer | null };

/** The answer of a record's latest attempt that has one; undefined where none was kept. */
export function answerOf(r: Pick<TaskRecord, 'attempts'>): Answer | undefined {
  const attempts = (r.attempts ?? []) as AttemptWithAnswer[];
  return [...attempts].sort((a, b) => b.attempt - a.attempt).find((a) => a.response)?.response ?? undefined;
}

/** Whether the service keeps answers at all: its records carry `response` on their attempts. */
export function keepsAnswers(rows: readonly Pick<TaskRecord, 'attempts'>[]): boolean {
  return rows.some((r) => (r.attempts ?? []).some((a) => 'response' in a));
}
