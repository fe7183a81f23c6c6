import { FormEvent, useState } from 'react';
import { Api, Session, statusOf } from '../api';
import { ErrorBanner, Field } from '../components';

/**
 * Sign in with an app token (acts on its app) or the admin token (any app): the API's list routes are
 * per app, so the app is asked for in both cases. The pair is checked with one list call first.
 */
export function SignIn({ onSignedIn }: { onSignedIn: (s: Session) => void }) {
  const [token, setToken] = useState('');
  const [app, setApp] = useState('');
  const [error, setError] = useState<string>();
  const [busy, setBusy] = useState(false);

  const submit = async (e: FormEvent) => {
    e.preventDefault();
    setBusy(true);
    setError(undefined);
    const session = { token: token.trim(), app: app.trim() };
    try {
      await new Api(session).listTimers({ pageIndex: 1, pageSize: 1 });
      onSignedIn(session);
    } catch (err) {
      if (statusOf(err) === 401) setError('This token was refused: check it and sign in again.');
      else if (statusOf(err) === 403) setError(`This token does not act on app "${session.app}".`);
      else setError(err instanceof Error ? err.message : 'sign-in failed');
    } finally {
      setBusy(false);
    }
  };

  return (
    <main className="narrow">
      <h1>Sign in</h1>
      <p className="muted">Use an app token or the admin token. It is kept for this tab only (sessionStorage) and cleared when you sign out.</p>
      <form onSubmit={submit} aria-label="Sign in">
        <Field label="Token">{(id) => <input id={id} name="token" type="password" autoComplete="off" required value={token} onChange={(e) => setToken(e.target.value)} />}</Field>
        <Field label="App" hint="The app whose timers you want to see.">
          {(id, d) => <input id={id} name="app" required aria-describedby={d} value={app} onChange={(e) => setApp(e.target.value)} />}
        </Field>
        <ErrorBanner error={error} />
        <button type="submit" className="primary" disabled={busy}>
          Sign in
        </button>
      </form>
    </main>
  );
}
