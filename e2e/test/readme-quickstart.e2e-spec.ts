import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { freePort } from '@timer/testing';
import { ROOT_DIR, runToExit, Stack } from '../support';

// The README's quick start, taken from the README itself and run by bash as written, against a fresh
// stack: the same text a newcomer pastes after `npm run up`, so it cannot drift from the service.
// The quick start reads the API's address, the admin token and the receiver's port from TIMER_URL,
// TIMER_ADMIN_TOKEN and HOOK_PORT (defaults: what `npm run up` uses); this test sets them to its stack's.
jest.setTimeout(240_000);

const TOKEN = 'quickstart-admin-token-0123456789';

/** The bash blocks of the README's "Quick start" section, in order, joined. */
export function quickStartScript(readme: string): string {
  const section = /^## Quick start\n([\s\S]*?)(?=^## )/m.exec(readme)?.[1];
  if (!section) throw new Error('README.md has no "## Quick start" section');
  const blocks = [...section.matchAll(/^```bash\n([\s\S]*?)^```$/gm)].map((m) => m[1]);
  if (blocks.length === 0) throw new Error('the README\'s quick start has no ```bash block');
  return blocks.join('\n');
}

let stack: Stack;

beforeAll(async () => {
  stack = await Stack.start({ adminToken: TOKEN });
});

afterAll(async () => {
  await stack?.stop();
});

it('runs the README quick start as written: create, enable, callbacks, the record, the console, timerctl', async () => {
  const script = quickStartScript(readFileSync(join(ROOT_DIR, 'README.md'), 'utf8'));
  const hookPort = await freePort();
  const run = await runToExit('bash', ['-e', '-c', script], {
    env: { ...process.env, TIMER_URL: stack.api.baseUrl, TIMER_ADMIN_TOKEN: TOKEN, HOOK_PORT: String(hookPort) },
    timeoutMs: 120_000,
  });
  const out = run.output;
  expect({ status: run.status, out }).toEqual({ status: 0, out: expect.any(String) });

  const id = /"code":0,"msg":"ok","id":(\d+)/.exec(out)?.[1];
  expect(id).toBeDefined();
  expect(out).toMatch(/"code":0,"msg":"ok","data":\{"changed":true/);
  // The receiver saw the timer's callbacks, body verbatim.
  expect(out).toMatch(new RegExp(`callback POST /hello fire ${id}-\\d+ attempt 1 \\{"hello":"world"\\}`));
  // The fire's record, delivered.
  expect(out).toMatch(new RegExp(`"data":\\[\\{"fireId":"${id}-\\d+","timerID":"?${id}"?,"app":"demo","runAt":\\d+,"status":2`));
  expect(out).toContain('console answers HTTP 200');
  // timerctl: the timer, its records, the disable.
  expect(out).toMatch(/hello/);
  expect(out).toMatch(/succeeded/);
  const timer = await stack.api.getTimer('demo', id!);
  expect(timer.status).toBe(1);
});
