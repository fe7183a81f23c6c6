import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import { forbidden, notFound } from '../common/errors';

/**
 * Who is calling. `admin`: TIMER_ADMIN_TOKEN, any app. `app`: an app token, its own app only.
 * `open`: TIMER_AUTH_DISABLED=true, treated like admin.
 */
export type Principal = { kind: 'admin' } | { kind: 'open' } | { kind: 'app'; app: string };

export interface AuthedRequest {
  principal?: Principal;
}

export const isAdmin = (p: Principal): boolean => p.kind !== 'app';

/**
 * Timer routes: an app token naming another app sees "not found", exactly as if the timer did not
 * exist, so ids and names of other apps leak nothing.
 */
export function assertTimerAccess(p: Principal, app: string, what = 'timer'): void {
  if (p.kind === 'app' && p.app !== app) throw notFound(`${what} not found`);
}

/** Routes that name an app rather than a timer (create, list, app admin): 403 for another app's token. */
export function assertAppAccess(p: Principal, app: string): void {
  if (p.kind === 'app' && p.app !== app) throw forbidden(`this token belongs to app ${p.app} and may not act on app ${app}`);
}

export function assertAdmin(p: Principal, what: string): void {
  if (!isAdmin(p)) throw forbidden(`${what} needs the admin token`);
}

/** The authenticated caller, set by `AuthGuard`. */
export const CurrentPrincipal = createParamDecorator((_: unknown, ctx: ExecutionContext): Principal => {
  const p = ctx.switchToHttp().getRequest<AuthedRequest>().principal;
  if (!p) throw new Error('CurrentPrincipal used on a route without AuthGuard');
  return p;
});
