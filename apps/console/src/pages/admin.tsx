import { FormEvent, ReactNode, useState } from 'react';
import { Api, fieldsOf } from '../api';
import { ConfirmButton, ErrorBanner, Field, messageOf, Notice } from '../components';

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

/** Apps and tokens, for the admin token only (an app token would be refused 403 by each route anyway). */
export function Admin({ api }: { api: Api }) {
  const [label, setLabel] = useState('');
  const [tokenId, setTokenId] = useState('');
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
        <AdminForm
          title="Create an app"
          defaultApp=""
          submit="Create app"
          run={async (app) => {
            await api.createApp(app);
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
            return (
              <>
                <Notice text={`Token ${t.id} issued for app "${app}".`} />
                <ShownOnce label="Token" value={t.token} />
              </>
            );
          }}
        />
        <AdminForm
          title="Revoke a token"
          defaultApp={api.app}
          submit="Revoke token"
          confirm={`Revoke token ${tokenId.trim()}`}
          extra={(f) => (
            <Field label="Token id" error={f['tokenId']} hint="The id the token was issued with.">
              {(id, d) => <input id={id} name="tokenId" inputMode="numeric" required aria-describedby={d} value={tokenId} onChange={(e) => setTokenId(e.target.value)} />}
            </Field>
          )}
          run={async (app) => {
            await api.revokeToken(app, tokenId.trim());
            return <Notice text={`Token ${tokenId.trim()} of app "${app}" revoked: it is refused from now on.`} />;
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
