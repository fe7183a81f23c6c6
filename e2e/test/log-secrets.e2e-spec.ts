import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ApiCallError, ApiClient, pollUntil, Receiver, runToExit, ScriptRun, Stack } from '../support';

// The logs of a whole run carry none of the secrets it used, and every line is JSON: the five roles
// at TIMER_LOG_LEVEL=verbose with TIMER_LOG_FORMAT=json (what Stack sets), a callback with a secret
// header value and body delivered and failed, an admin token, an app token, a signing secret, a 409
// duplicate create (a failed INSERT whose parameters hold the secrets), rejected requests echoing
// secrets, and role starts with a MySQL password in a bad URL. Needs `npm run build` first.
jest.setTimeout(90_000);

const tag = () => randomBytes(6).toString('hex');
const SECRETS = {
  adminToken: `adm-${tag()}-${tag()}`,
  headerValue: `hdr-${tag()}`,
  body: `body-${tag()}`,
  wrongToken: `wrong-${tag()}`,
  mysqlPassword: `pw-${tag()}`,
  shortAdminToken: `s-${tag()}`,
};
const APP = 'e2e-log-secrets';

let stack: Stack;
let receiver: Receiver;
let stopped = false;
/** Secrets only known once the API returned them (app token, signing secret). */
const issued: Record<string, string> = {};
/** Output of the role starts with a bad configuration (they exit before they log anywhere else). */
const badStarts: (ScriptRun & { what: string })[] = [];

/** Runs a built entry point with `env` until it exits (a bad configuration exits at once). */
const runBuilt = (entry: string, env: NodeJS.ProcessEnv) => runToExit(process.execPath, ['-r', './scripts/register-paths.js', entry], { env, timeoutMs: 20_000, signal: 'SIGKILL' });

const callback = (path: string) => ({
  url: receiver.url(path),
  method: 'POST',
  header: { 'Content-Type': ['application/json'], 'X-Api-Key': [SECRETS.headerValue] },
  body: JSON.stringify({ secret: SECRETS.body }),
});

beforeAll(async () => {
  receiver = await Receiver.start();
  receiver.respond((d) => (d.path === '/fail' ? { status: 400 } : undefined));
  stack = await Stack.start({ adminToken: SECRETS.adminToken, env: { TIMER_LOG_LEVEL: 'verbose', TIMER_WINDOW_MINUTES: '5' } });
  const admin = stack.api;
  await admin.call('POST', '/api/app/v1/apps', { app: APP });
  issued.appToken = (await admin.call<{ data: { token: string } }>('POST', '/api/app/v1/tokens', { app: APP })).data.token;
  issued.signingSecret = (await admin.call<{ data: { secret: string } }>('POST', '/api/app/v1/secret', { app: APP })).data.secret;
  const api = new ApiClient(admin.baseUrl, issued.appToken);

  const ok = await api.createEnabled({ app: APP, name: 'ok', cron: '* * * * * *', notifyHTTPParam: callback('/ok') });
  const failing = await api.createEnabled({ app: APP, name: 'fail', cron: '* * * * * *', notifyHTTPParam: callback('/fail'), retryPolicy: { maxAttempts: 1 } });
  // 409: the INSERT fails on the unique name, with the callback among its parameters.
  const duplicate = await api.createTimer({ app: APP, name: 'ok', cron: '* * * * * *', notifyHTTPParam: callback('/ok') }).catch((e: unknown) => e);
  expect(duplicate).toBeInstanceOf(ApiCallError);
  expect((duplicate as ApiCallError).httpStatus).toBe(409);
  // Rejected requests whose bodies or headers hold secrets (400, 401).
  const badHeader = { ...callback('/ok'), header: { 'X-Api-Key': [`${SECRETS.headerValue}\r\nX-Injected: 1`] } };
  await expect(api.createTimer({ app: APP, name: 'bad', cron: '* * * * * *', notifyHTTPParam: badHeader })).rejects.toMatchObject({ httpStatus: 400 });
  await expect(new ApiClient(admin.baseUrl, SECRETS.wrongToken).getTimer(APP, ok)).rejects.toMatchObject({ httpStatus: 401 });

  expect(await pollUntil(() => receiver.forTimer(ok).length >= 3 && receiver.forTimer(failing).length >= 1, 30_000)).toBe(true);
  // A failed fire is recorded (dead-lettered) before the logs are read.
  expect(await pollUntil(async () => (await api.records(APP, failing, { status: 3 })).total >= 1, 15_000)).toBe(true);
  await api.unable(APP, failing);

  // A role and the migrate command started with the MySQL password in a URL they refuse; the api with
  // an admin token too short to accept.
  const env = stack.env('api');
  const badUrls = [`mysql://timer:${SECRETS.mysqlPassword}@127.0.0.1:3306/timer?sslca=/etc/ca.pem`, `mysql://timer:${SECRETS.mysqlPassword}@127.0.0.1:notaport/timer`];
  for (const [i, url] of badUrls.entries()) badStarts.push({ what: `api, bad URL ${i + 1}`, ...(await runBuilt('dist/apps/api/src/main.js', { ...env, TIMER_MYSQL_URL: url })) });
  badStarts.push({ what: 'api, short admin token', ...(await runBuilt('dist/apps/api/src/main.js', { ...env, TIMER_ADMIN_TOKEN: SECRETS.shortAdminToken })) });
  badStarts.push({ what: 'migrate', ...(await runBuilt('dist/apps/migrator/src/cli/migrate.js', { PATH: process.env.PATH, TIMER_LOG_FORMAT: 'json', TIMER_MYSQL_URL: badUrls[0] })) });
});

afterAll(async () => {
  if (!stopped) await stack?.stop();
  await receiver?.close();
});

/** Every line each role wrote (the stack's log files, minus the harness's own `===` markers), and the bad starts'. */
async function allLines(): Promise<{ source: string; line: string }[]> {
  await stack.stop();
  stopped = true;
  await new Promise((r) => setTimeout(r, 300)); // the log streams flush after end()
  const fromFiles = readdirSync(stack.logDir).flatMap((f) =>
    readFileSync(join(stack.logDir, f), 'utf8')
      .split('\n')
      .filter((line) => line !== '' && !line.startsWith('=== '))
      .map((line) => ({ source: f, line })),
  );
  const fromStarts = badStarts.flatMap((b) => b.output.split('\n').filter(Boolean).map((line) => ({ source: b.what, line })));
  return [...fromFiles, ...fromStarts];
}

it('refuses the bad configurations, naming the variable', () => {
  expect(badStarts.map((b) => [b.what, b.status])).toEqual([
    ['api, bad URL 1', 1],
    ['api, bad URL 2', 1],
    ['api, short admin token', 1],
    ['migrate', 1],
  ]);
  for (const b of badStarts.filter((b) => b.what !== 'api, short admin token')) expect(b.output).toMatch(/TIMER_MYSQL_URL: /);
  expect(badStarts[0].output).toContain('mysql://timer:***@127.0.0.1:3306');
  expect(badStarts[2].output).toMatch(/TIMER_ADMIN_TOKEN: .*\(value hidden\)/);
});

it('writes no secret into any log line, and every line is one JSON object', async () => {
  const lines = await allLines();
  const secrets = { ...SECRETS, ...issued };
  const leaks = lines.flatMap(({ source, line }) => Object.entries(secrets).filter(([, s]) => line.includes(s)).map(([name]) => `${name} in ${source}: ${line.slice(0, 300)}`));
  expect(leaks).toEqual([]);

  const notJson = lines.filter(({ line }) => {
    try {
      const o = JSON.parse(line) as { level?: unknown; message?: unknown };
      return typeof o.level !== 'string' || o.message === undefined;
    } catch {
      return true;
    }
  });
  expect(notJson.map(({ source, line }) => `${source}: ${line.slice(0, 300)}`)).toEqual([]);

  // The run produced what the checks are about: verbose output, the failed INSERT behind the 409
  // (through TypeORM's logger), the dead-lettered fire, all five roles.
  const parsed = lines.map(({ source, line }) => ({ source, ...(JSON.parse(line) as { level: string; context?: string; message: string }) }));
  expect(parsed.some((p) => p.level === 'verbose' || p.level === 'debug')).toBe(true);
  expect(parsed.some((p) => p.context === 'TypeORM' && /query failed: .*Duplicate entry '\?'/.test(p.message))).toBe(true);
  expect(parsed.some((p) => p.source.startsWith('executor') && /failed after attempt 1/.test(p.message))).toBe(true);
  expect(new Set(parsed.map((p) => p.source.replace(/\.log$/, '')))).toEqual(new Set(['api', 'migrator', 'scheduler', 'trigger', 'executor', ...badStarts.map((b) => b.what)]));
});
