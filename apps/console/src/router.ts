import { useEffect, useState } from 'react';

/** The console's pages, under /console/ (the api answers index.html for each). */
export type Route = { page: 'timers' } | { page: 'new' } | { page: 'overview' } | { page: 'dead-letters' } | { page: 'admin' } | { page: 'timer'; id: string };

export const BASE = '/console';

export function parseRoute(pathname: string): Route {
  const rest = pathname.startsWith(BASE) ? pathname.slice(BASE.length) : pathname;
  const timer = /^\/timers\/(\d{1,20})\/?$/.exec(rest);
  if (timer) return { page: 'timer', id: timer[1] };
  if (/^\/new\/?$/.test(rest)) return { page: 'new' };
  if (/^\/overview\/?$/.test(rest)) return { page: 'overview' };
  if (/^\/dead-letters\/?$/.test(rest)) return { page: 'dead-letters' };
  if (/^\/admin\/?$/.test(rest)) return { page: 'admin' };
  return { page: 'timers' };
}

export function hrefOf(route: Route): string {
  switch (route.page) {
    case 'timer':
      return `${BASE}/timers/${route.id}`;
    case 'new':
      return `${BASE}/new`;
    case 'overview':
      return `${BASE}/overview`;
    case 'dead-letters':
      return `${BASE}/dead-letters`;
    case 'admin':
      return `${BASE}/admin`;
    default:
      return `${BASE}/timers`;
  }
}

export function navigate(href: string): void {
  window.history.pushState(null, '', href);
  window.dispatchEvent(new PopStateEvent('popstate'));
}

/** The current location, re-read on back/forward and on `navigate`. */
export function useLocation(): Location {
  const [, setTick] = useState(0);
  useEffect(() => {
    const onPop = () => setTick((n) => n + 1);
    window.addEventListener('popstate', onPop);
    return () => window.removeEventListener('popstate', onPop);
  }, []);
  return window.location;
}
