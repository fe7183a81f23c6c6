import { FormEvent, ReactNode, useEffect, useState } from 'react';
import { Api, AppSummary, AppToken, fieldsOf } from '../api';
import { ConfirmButton, ErrorBanner, Field, HeadRow, messageOf, Notice, Pager, Time } from '../components';

/** A secret the API answers once: shown with a copy hint, gone when the page is left. */
function ShownOnce({ label, value }: { label: string; value: string }) {
  const [copied, setCopied] = useState<string>();
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
      setCopied('Copied.');
    } catch {
      setCopied('Copying was refused: select the text and copy it by hand.');
    }
  };
  return (
    <div className="shown-once" role="status">
      <p>
        <strong>{label}</strong> (shown this once: copy it now, the console cannot show it again):
      </p>
      <p>
        <code className="secret" data-secret={label}>
          {value}
        </code>{' '}
        <button type="button" onClick={copy}>
          Copy
        </button>{' '}
        <span className="muted">{copied}</span>
      </p>
    </div>
  );
}

/** One admin form: its own app field, the API's message under the field it names, its own answer. */
function AdminForm(props: {
  title: string;
  defaultApp: string;
  submit: string;
  confirm?: string;
  extra?: (fields: Record<string, string>) => ReactNode;
  run: (app: string) => Promise<ReactNode>;
}) {
  const [app, setApp] = useState(props.defaultApp);
  const [fields, setFields] = useState<Record<string, string>>({});
  const [error, setError] = useState<string>();
  const [answer, setAnswer] = useState<ReactNode>();
  const go = async () => {
    setError(undefined);
    setFields({});
    setAnswer(undefined);
    try {
      setAnswer(await props.run(app.trim()));
    } catch (e) {
      const f = fieldsOf(e);
      setFields(f);
      if (Object.keys(f).length === 0) setError(messageOf(e));
    }
  };
  const onSubmit = (e: FormEvent) => {
    e.preventDefault();
    if (!props.confirm) void go();
  };
  return (
    <section className="admin-form" aria-label={props.title}>
      <h2>{props.title}</h2>
      <form onSubmit={onSubmit}>
        <Field label="App" error={fields['app']}>
          {(id, d) => <input id={id} name="app" required aria-describedby={d} value={app} onChange={(e) => setApp(e.target.value)} />}
        </Field>
        {props.extra?.(fields)}
        {props.confirm ? (
          <ConfirmButton label={props.submit} question={`${props.confirm} of app "${app.trim()}"?`} danger onConfirm={go} disabled={!app.trim()} />
        ) : (
          <button type="submit" className="primary">
            {props.submit}
          </button>
        )}
      </form>
      <ErrorBanner error={error} />
      {answer}
    </section>
  );
}

const APPS_PAGE = 20;

/** Every app, by name, paged; "Tokens" shows that app's tokens below. */
function AppList({ api, tick, onPick }: { api: Api; tick: number; onPick: (app: string) => void }) {
  const [page, setPage] = useState(1);
  const [rows, setRows] = useState<AppSummary[]>();
  const [total, setTotal] = useState(0);
  const [error, setError] = useState<string>();
  useEffect(() => {
    let on = true;
    api
      .listApps(page, APPS_PAGE)
      .then((r) => {
        if (!on) return;
        setRows(r.data);
        setTotal(r.total);
      })
      .catch((e: unknown) => on && setError(messageOf(e)));
    return () => {
      on = false;
    };
  }, [api, page, tick]);
  return (
    <section className="admin-form wide" aria-labelledby="apps-h">
      <h2 id="apps-h">Apps</h2>
      <ErrorBanner error={error} />
      {rows && rows.length > 0 && (
        <table className="list apps">
          <HeadRow columns={['App', 'Timers', 'Tokens', 'Paused', 'Created', '']} />
          <tbody>
            {rows.map((a) => (
              <tr key={a.app} data-app={a.app}>
                <td data-label="App">{a.app}</td>
                <td data-label="Timers">{a.liveTimers}</td>
                <td data-label="Tokens">{a.liveTokens}</td>
                <td data-label="Paused">{a.paused ? 'paused' : 'no'}</td>
                <td data-label="Created">
                  <Time ms={a.createdAt} />
                </td>
                <td data-label="Tokens">
                  <button type="button" onClick={() => onPick(a.app)} aria-label={`Tokens of ${a.app}`}>
                    Tokens
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Pager label="App pages" page={page} total={total} pageSize={APPS_PAGE} noun="apps" go={setPage} />
    </section>
  );
}

/** One app's tokens: ids, labels, times (never a token), each live one revocable (confirmed). */
function TokenList({ api, app, tick, onRevoked }: { api: Api; app: string; tick: number; onRevoked: () => void }) {
  const [rows, setRows] = useState<AppToken[]>();
  const [revoked, setRevoked] = useState(false);
  const [error, setError] = useState<string>();
  const [notice, setNotice] = useState<string>();
  useEffect(() => {
    let on = true;
    setError(undefined);
    api
      .listTokens(app, revoked)
      .then((r) => on && setRows(r.data))
      .catch((e: unknown) => {
        if (!on) return;
        setRows(undefined);
        setError(messageOf(e));
      });
    return () => {
      on = false;
    };
  }, [api, app, revoked, tick]);
  return (
    <section className="admin-form wide" aria-labelledby="tokens-h">
      <h2 id="tokens-h">Tokens of {app}</h2>
      <label className="inline">
        <input type="checkbox" name="includeRevoked" checked={revoked} onChange={(e) => setRevoked(e.target.checked)} /> Show revoked tokens too
      </label>
      <ErrorBanner error={error} />
      <Notice text={notice} />
      {rows && rows.length === 0 && <p className="muted">No tokens.</p>}
      {rows && rows.length > 0 && (
        <table className="list tokens">
          <HeadRow columns={['Id', 'Label', 'Issued', 'Revoked', '']} />
          <tbody>
            {rows.map((t) => (
              <tr key={t.id} data-token-id={t.id}>
                <td data-label="Id">{t.id}</td>
                <td data-label="Label">{t.label ?? <span className="muted">none</span>}</td>
                <td data-label="Issued">
                  <Time ms={t.createdAt} />
                </td>
                <td data-label="Revoked">{t.revokedAt === null ? 'live' : <Time ms={t.revokedAt} />}</td>
                <td data-label="Revoke">
                  {t.revokedAt === null && (
                    <ConfirmButton
                      label="Revoke"
                      danger
                      question={`Revoke token ${t.id}${t.label ? ` (${t.label})` : ''} of ${app}?`}
                      onConfirm={async () => {
                        try {
                          await api.revokeToken(app, String(t.id));
                          setNotice(`Token ${t.id} of app "${app}" revoked: it is refused from now on.`);
                          onRevoked();
                        } catch (e) {
                          setError(messageOf(e));
                        }
                      }}
                    />
                  )}
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </section>
  );
}

/** Apps and tokens, for the admin token only (an app token would be refused 403 by each route anyway). */
export function Admin({ api }: { api: Api }) {
  const [label, setLabel] = useState('');
  const [tokensOf, setTokensOf] = useState(api.app);
  const [tick, setTick] = useState(0);
  const changed = () => setTick((n) => n + 1);
  if (!api.isAdmin) {
    return (
      <main className="narrow">
        <h1>Apps and tokens</h1>
        <p>This page needs the admin token: sign out and sign in with it.</p>
      </main>
    );
  }
  return (
    <main>
      <h1>Apps and tokens</h1>
      <div className="admin-grid">
        <AppList api={api} tick={tick} onPick={setTokensOf} />
        <TokenList api={api} app={tokensOf} tick={tick} onRevoked={changed} />
        <AdminForm
          title="Create an app"
          defaultApp=""
          submit="Create app"
          run={async (app) => {
            await api.createApp(app);
            changed();
            return <Notice text={`App "${app}" created.`} />;
          }}
        />
        <AdminForm
          title="Issue a token"
          defaultApp={api.app}
          submit="Issue token"
          extra={(f) => (
            <Field label="Label" error={f['label']} hint="Optional: who or what uses it.">
              {(id, d) => <input id={id} name="label" aria-describedby={d} value={label} onChange={(e) => setLabel(e.target.value)} />}
            </Field>
          )}
          run={async (app) => {
            const t = await api.issueToken(app, label.trim() || undefined);
            setTokensOf(app);
            changed();
            return (
              <>
                <Notice text={`Token ${t.id} issued for app "${app}".`} />
                <ShownOnce label="Token" value={t.token} />
              </>
            );
          }}
        />
        <AdminForm
          title="Rotate the signing secret"
          defaultApp={api.app}
          submit="Rotate secret"
          confirm="Replace the callback signing secret"
          run={async (app) => {
            const secret = await api.rotateSecret(app);
            return (
              <>
                <Notice text={`New signing secret for app "${app}": callbacks are signed with it from now on.`} />
                <ShownOnce label="Signing secret" value={secret} />
              </>
            );
          }}
        />
      </div>
    </main>
  );
}
