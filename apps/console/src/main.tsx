import { StrictMode, useMemo, useState } from 'react';
import { createRoot } from 'react-dom/client';
import { Api, Session } from './api';
import { Link } from './components';
import { Admin } from './pages/admin';
import { CreateTimer } from './pages/create';
import { DeadLetters } from './pages/dead-letters';
import { Overview } from './pages/overview';
import { SignIn } from './pages/sign-in';
import { TimerPage } from './pages/timer';
import { Timers } from './pages/timers';
import { hrefOf, navigate, parseRoute, useLocation } from './router';
import { clearSession, loadSession, saveSession } from './session';
import './styles.css';

function App() {
  const [session, setSession] = useState<Session | undefined>(loadSession);
  const location = useLocation();
  const api = useMemo(() => (session ? new Api(session) : undefined), [session]);
  const route = parseRoute(location.pathname);

  const signOut = () => {
    clearSession();
    setSession(undefined);
    navigate(hrefOf({ page: 'timers' }));
  };

  return (
    <>
      <a className="skip" href="#content">
        Skip to content
      </a>
      <header className="top">
        <Link href={hrefOf({ page: 'timers' })} className="brand">
          Timer console
        </Link>
        {session && (
          <nav aria-label="Main">
            <Link href={hrefOf({ page: 'timers' })}>Timers</Link>
            <Link href={hrefOf({ page: 'new' })}>New timer</Link>
            <Link href={hrefOf({ page: 'overview' })}>Overview</Link>
            <Link href={hrefOf({ page: 'dead-letters' })}>Dead letters</Link>
            {api?.isAdmin && <Link href={hrefOf({ page: 'admin' })}>Apps and tokens</Link>}
            <span className="who" title="the app this session looks at">
              app <strong>{session.app}</strong>
            </span>
            <button type="button" onClick={signOut}>
              Sign out
            </button>
          </nav>
        )}
      </header>
      <div id="content">
        {!api ? (
          <SignIn
            onSignedIn={(s) => {
              saveSession(s);
              setSession(s);
            }}
          />
        ) : route.page === 'timer' ? (
          <TimerPage key={route.id} api={api} id={route.id} />
        ) : route.page === 'new' ? (
          <CreateTimer api={api} />
        ) : route.page === 'overview' ? (
          <Overview api={api} />
        ) : route.page === 'dead-letters' ? (
          <DeadLetters api={api} />
        ) : route.page === 'admin' ? (
          <Admin api={api} />
        ) : (
          <Timers key={location.search} api={api} />
        )}
      </div>
    </>
  );
}

createRoot(document.getElementById('root')!).render(
  <StrictMode>
    <App />
  </StrictMode>,
);
