import type { Session } from './api';

// sessionStorage only: the token lives as long as the tab, is not shared with other tabs and never
// reaches localStorage or a cookie.
const KEY = 'timer-console.session';

export function loadSession(): Session | undefined {
  try {
    const raw = window.sessionStorage.getItem(KEY);
    if (!raw) return undefined;
    const s = JSON.parse(raw) as Partial<Session>;
    return typeof s.token === 'string' && typeof s.app === 'string' ? { token: s.token, app: s.app } : undefined;
  } catch {
    return undefined;
  }
}

export function saveSession(s: Session): void {
  window.sessionStorage.setItem(KEY, JSON.stringify(s));
}

export function clearSession(): void {
  window.sessionStorage.removeItem(KEY);
}
