import { fillCallback, TemplatedParts, usesPlaceholder } from '@timer/callback';
import { FireRef, fireId } from '@timer/contracts';
import { TimerEntity } from '@timer/dal';
import { previousFireTime, specOf } from '@timer/schedule';

/**
 * The URL, header and body one attempt of a fire is called with: the timer's own, verbatim; filled
 * per fire when `notifyHTTPParam.template` is true (`@timer/callback` template). The previous fire
 * time is computed only when a placeholder asks for it.
 */
export function callbackPartsOf(timer: TimerEntity, fire: FireRef & { attempt: number }): TemplatedParts {
  const p = timer.notifyHttpParam;
  const parts: TemplatedParts = { url: p.url, header: p.header, body: p.body };
  if (p.template !== true) return parts;
  const wantsPrevious = usesPlaceholder(p.url, 'previousScheduledAt') || usesPlaceholder(p.body, 'previousScheduledAt') ||
    Object.values(p.header ?? {}).some((vs) => vs.some((v) => usesPlaceholder(v, 'previousScheduledAt')));
  return fillCallback(parts, {
    scheduledAt: String(fire.runAt),
    scheduledAtIso: new Date(fire.runAt).toISOString(),
    previousScheduledAt: wantsPrevious ? previousOf(timer, fire.runAt) : '',
    fireId: fireId(fire.timerId, fire.runAt),
    attempt: String(fire.attempt),
    timerId: fire.timerId,
    app: timer.app,
  });
}

/** The schedule's nominal fire before `runAt` ('' for the first); a schedule that no longer evaluates gives ''. */
function previousOf(timer: TimerEntity, runAt: number): string {
  try {
    const prev = previousFireTime(specOf(timer), runAt);
    return prev === undefined ? '' : String(prev);
  } catch {
    return '';
  }
}
