import { spawnSync } from 'child_process';
import { mkdtempSync, writeFileSync } from 'fs';
import { tmpdir } from 'os';
import { join } from 'path';
// The e2e Stack is what starts the built roles as processes; it lives in e2e/support, which is no lib.
// eslint-disable-next-line @nx/enforce-module-boundaries
import { ROOT_DIR, Stack } from '../../../e2e/support';
import { run } from '../src/cli/run';

// timerctl against the built api as a process (e2e Stack, api role only: real MariaDB, Redis, Pulsar):
// each command's output and exit code, in process through run(), and once through `npx timerctl`.
jest.setTimeout(60_000);

const TOKEN = 'timerctl-admin-token-0123456789';
const APP = 'ctl-it';

let stack: Stack;
let env: Record<string, string>;

async function timerctl(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const code = await run(argv, { stdout: (s) => (out += s), stderr: (s) => (err += s), env });
  return { code, out, err };
}

beforeAll(async () => {
  stack = await Stack.start({ adminToken: TOKEN, roles: ['api'], env: { TIMER_WINDOW_MINUTES: '5' } });
  env = { TIMER_URL: `http://127.0.0.1:${stack.port('api')}`, TIMER_TOKEN: TOKEN, TIMER_APP: APP };
});

afterAll(() => stack?.stop());

describe('timerctl against the running api', () => {
  it('creates, lists, gets, edits, enables, runs, shows records and the preview, and deletes a timer', async () => {
    const callback = ['--callback', 'http://127.0.0.1:9/hook', '--method', 'post', '--header', 'Content-Type: application/json', '--body', '{"a":1}'];
    const hook = ['--failure-webhook', 'https://hooks.example.com/ctl', '--failure-webhook-header', 'Authorization: Bearer hook'];
    const created = await timerctl('timers', 'create', '--name', 'nightly', '--cron', '30 2 * * *', '--zone', 'Europe/Berlin', ...callback, ...hook, '-o', 'json');
    expect(created).toMatchObject({ code: 0, err: '' });
    const id = String((JSON.parse(created.out) as { id: number }).id);

    const duplicate = await timerctl('timers', 'create', '--name', 'nightly', '--cron', '30 2 * * *', ...callback);
    expect(duplicate.code).toBe(1);
    expect(duplicate.err).toMatch(/^timerctl: 409: app ctl-it already has a timer named "nightly" \(code 40900, request \w+\)\n$/);
    const badUrl = await timerctl('timers', 'create', '--name', 'other', '--cron', '30 2 * * *', '--callback', 'ftp://x', '--method', 'POST');
    expect(badUrl.code).toBe(1);
    expect(badUrl.err).toContain('[field notifyHTTPParam.url]');

    const list = await timerctl('timers', 'list');
    expect(list.code).toBe(0);
    expect(list.out).toMatch(new RegExp(`^ID +NAME +STATUS .*\\n${id} +nightly +disabled +cron 30 2 \\* \\* \\* +Europe/Berlin +1 +POST http://127.0.0.1:9/hook\\n\\(1-1 of 1\\)\\n$`));

    const got = await timerctl('timers', 'get', id, '-o', 'json');
    const timer = JSON.parse(got.out) as { version: number; nextFireTimes: number[]; notifyHTTPParam: { header: Record<string, string[]> } };
    expect(timer).toMatchObject({ version: 1, notifyHTTPParam: { header: { 'Content-Type': ['application/json'] } }, failureWebhook: { url: 'https://hooks.example.com/ctl', headers: { Authorization: ['Bearer hook'] } } });
    expect((await timerctl('timers', 'get', id)).out).toContain('failure webhook  https://hooks.example.com/ctl\n  header         Authorization: Bearer hook\n');

    expect(await timerctl('timers', 'edit', id, '--every', '90s')).toEqual({ code: 0, out: `updated timer ${id} to version 2 (0 pending fires superseded, 0 created)\n`, err: '' });
    const stale = await timerctl('timers', 'edit', id, '--name', 'renamed', '--version', '1');
    expect(stale.code).toBe(1);
    expect(stale.err).toContain(`conflict: timer ${id} was changed by someone else (you edited version 1, it is now at version 2)`);

    // The output of `get -o json` as the file of a PUT, at the version it was read at.
    const file = join(mkdtempSync(join(tmpdir(), 'timerctl-')), 'def.json');
    writeFileSync(file, (await timerctl('timers', 'get', id, '-o', 'json')).out);
    const put = await timerctl('timers', 'edit', id, '--file', file, '--cron', '*/5 * * * *', '-o', 'json');
    expect([put.code, put.err]).toEqual([0, ""]);
    expect(JSON.parse(put.out)).toMatchObject({ version: 3, changed: true });
    expect((await timerctl('timers', 'edit', id, '--file', file)).code).toBe(1); // the file's version 2 is stale now

    expect((await timerctl('timers', 'run', id)).code).toBe(1); // disabled: 409
    expect(await timerctl('timers', 'enable', id)).toMatchObject({ code: 0, out: expect.stringMatching(new RegExp(`^enabled timer ${id} \\(version 4, \\d+ fires prepared until `)) });
    const fire = await timerctl('timers', 'run', id, '-o', 'json');
    expect(fire.code).toBe(0);
    const { fireId } = JSON.parse(fire.out) as { fireId: string };
    const records = await timerctl('records', '--timer', id, '--fire', fireId);
    expect(records.out).toMatch(new RegExp(`^FIRE ID .*\\n${fireId} +\\S+ +pending +0 .*\\n\\(1-1 of 1\\)\\n$`));

    const preview = await timerctl('preview', id);
    expect(preview.code).toBe(0);
    expect(preview.out).toMatch(new RegExp(`^timer ${id} nightly: cron \\*/5 \\* \\* \\* \\* in Europe/Berlin \\(enabled\\)\\nEUROPE/BERLIN +UTC\\n\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:00 GMT\\+0[12]:00 +\\d{4}-`));

    // Its failure webhook removed (the app's applies again): a new version, and get no longer shows one.
    expect((await timerctl('timers', 'edit', id, '--no-failure-webhook')).out).toMatch(new RegExp(`^updated timer ${id} to version 5 `));
    expect((await timerctl('timers', 'get', id)).out).not.toContain('failure webhook');

    expect(await timerctl('timers', 'delete', id)).toEqual({ code: 0, out: `deleted timer ${id}\n`, err: '' });
    expect(await timerctl('timers', 'get', id)).toMatchObject({ code: 1, err: expect.stringContaining('404: timer not found') });
  });

  it('exit 2 for usage, 3 for an api that does not answer, the overview, and the same through npx timerctl', async () => {
    expect((await timerctl('timers', 'get')).code).toBe(2);
    expect((await timerctl('timers', 'list', '--url', 'http://127.0.0.1:9')).code).toBe(3);
    expect(await timerctl('dlq', 'list', '-o', 'json')).toMatchObject({ code: 0, out: expect.stringContaining('"total": 0') });
    const token = await fetch(`${env.TIMER_URL}/api/app/v1/tokens`, { method: 'POST', headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' }, body: JSON.stringify({ app: APP, label: 'ctl' }) });
    const issued = ((await token.json()) as { data: { id: number; token: string } }).data;
    const apps = await timerctl('apps', 'list');
    expect(apps).toMatchObject({ code: 0, err: '' });
    expect(apps.out).toMatch(new RegExp(`^APP +TIMERS +TOKENS +PAUSED +CREATED\\n${APP} +\\d+ +1 +- +\\S+Z\\n`));
    const tokens = await timerctl('tokens', 'list');
    expect(tokens.out).toMatch(new RegExp(`^ID +LABEL +ISSUED +REVOKED\\n${issued.id} +ctl +\\S+Z +-\\n1 token\\(s\\)`));
    expect(tokens.out).not.toContain(issued.token);
    const overview = await timerctl('overview');
    expect(overview).toMatchObject({ code: 0, err: '' });
    expect(overview.out).toMatch(/^app ctl-it, \S+ to \S+ in buckets of 60 s\n/);
    expect(overview.out).toMatch(/\nbacklog: \d+ pending past their time/);
    expect(await timerctl('overview', '--bucket-ms', '10')).toMatchObject({ code: 1, err: expect.stringContaining('[field bucketMs]') });

    const npx = (...args: string[]) => spawnSync('npx', ['--no-install', 'timerctl', ...args], { cwd: ROOT_DIR, env: { ...process.env, ...env }, encoding: 'utf8', timeout: 45_000 });
    const listed = npx('timers', 'list', '-o', 'json');
    expect([listed.status, JSON.parse(listed.stdout)]).toEqual([0, { data: [], total: 0 }]);
    const refused = npx('timers', 'get', '999999');
    expect([refused.status, refused.stdout]).toEqual([1, '']);
    expect(refused.stderr).toContain('404: timer not found');
  });
});
