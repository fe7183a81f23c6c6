import { Page } from 'playwright-core';
import { ConsoleRig, consoleShot, nextSecond, pollUntil } from '../support';

// The web console in a real headless Chromium (Debian's, via deploy/local/chromium.sh; playwright-core
// never downloads one) against the built roles: sign in, a create refused with the API's message next
// to its field, create, the preview, the first records, an edit that meets a second tab's edit (409),
// run now, disable, delete, the overview and its charts, a dead letter replayed once its receiver recovered
// and another purged, an app and a token made, the token revoked and the signing secret rotated (shown
// once) on the admin page (the app listed, the token revoked from the app's token list), every page at a phone's width without horizontal overflow, sign out. Any console
// error or page error fails the test; the browser's own "Failed to load resource" lines may name only the
// two refusals the test provokes (400, 409).
// TIMER_CONSOLE_SCREENSHOTS=1 rewrites the screenshots in docs/console/ (docs/console.md shows them).
jest.setTimeout(120_000);

const APP = 'console-e2e';
const TOKEN = 'console-e2e-admin-token-0123456789';

const rig = new ConsoleRig();
beforeAll(() => rig.start(TOKEN));
afterAll(() => rig.stop());

async function signIn(page: Page): Promise<void> {
  await page.getByLabel('Token').fill(TOKEN);
  await page.getByLabel('App').fill(APP);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

it('signs in, creates a timer, shows its preview and records, edits it through a conflict, runs it now, draws the overview, replays and purges dead letters, makes an app and a token, lists and revokes it, rotates the secret, fits a phone, and signs out', async () => {
  const { base, stack, receiver } = rig;
  const page = await rig.newPage();

  const first = await page.goto(`${base}/`);
  expect(first?.status()).toBe(200);
  expect(first?.headers()['content-security-policy']).toContain("script-src 'self'");
  await page.getByRole('heading', { name: 'Sign in' }).waitFor();
  await consoleShot(page, 'sign-in');
  await signIn(page);
  await page.getByRole('heading', { name: `Timers of ${APP}` }).waitFor();

  // Create: the API's message next to the field it names, nothing created; then a valid one.
  await page.getByRole('main').getByRole('link', { name: 'New timer' }).click();
  await page.getByLabel('Name', { exact: true }).fill('heartbeat');
  await page.getByLabel('Interval').check();
  await page.getByLabel('Every').fill('0s');
  await page.getByLabel('URL', { exact: true }).fill(receiver.url('/console'));
  await page.getByRole('button', { name: 'Create timer' }).click();
  const everyField = page.locator('.field.invalid', { has: page.getByLabel('Every') });
  await everyField.getByText('every must be at least 1s').waitFor();
  const listed = await fetch(`http://127.0.0.1:${stack.port('api')}/api/timer/v1/defs?app=${APP}`, { headers: { Authorization: `Bearer ${TOKEN}` } });
  expect(((await listed.json()) as { total: number }).total).toBe(0);
  await page.getByLabel('Every').fill('2s');
  await page.getByLabel('Enable now').check();
  await page.getByRole('button', { name: 'Create timer' }).click();
  await page.waitForURL(/\/console\/timers\/\d+$/);
  const timerUrl = page.url();
  const id = timerUrl.split('/').pop()!;

  // The preview (GET's nextFireTimes) in the timer's zone, UTC on hover; then the first records.
  const preview = page.locator('ol.preview li time');
  await preview.first().waitFor();
  expect(await preview.count()).toBe(5);
  expect(await preview.first().getAttribute('title')).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/);
  await page.locator('table.records .s-succeeded').first().waitFor({ timeout: 30_000 });
  await consoleShot(page, 'timer');

  // Edit in this tab while a second tab (its own sign-in: the token is per tab) saves first.
  await page.getByRole('button', { name: 'Edit' }).click();
  await page.getByLabel('Name', { exact: true }).fill('heartbeat-tab-1');
  const tab2 = await rig.newPage();
  await tab2.goto(timerUrl);
  await signIn(tab2);
  await tab2.getByRole('button', { name: 'Edit' }).click();
  await tab2.getByLabel('Name', { exact: true }).fill('heartbeat-tab-2');
  await tab2.getByRole('button', { name: 'Save changes' }).click();
  await tab2.getByText(/Saved as version \d+/).waitFor();
  await tab2.close();
  await page.getByRole('button', { name: 'Save changes' }).click();
  await page.getByText('Someone else changed this timer').waitFor();
  await page.getByRole('heading', { name: /^Definition/ }).scrollIntoViewIfNeeded();
  await consoleShot(page, 'conflict');
  await page.getByRole('button', { name: 'Reload the current version' }).click();
  await page.getByText('Someone else changed this timer').waitFor({ state: 'detached' });
  expect(await page.getByLabel('Name', { exact: true }).inputValue()).toBe('heartbeat-tab-2');
  await page.getByLabel('Name', { exact: true }).fill('heartbeat-edited');
  await page.getByRole('button', { name: 'Save changes' }).click();
  await page.getByText(/Saved as version \d+/).waitFor();
  await page.getByRole('heading', { name: 'heartbeat-edited' }).waitFor();

  // Run now, confirmed: the fire is delivered and its record shows up.
  await page.getByRole('button', { name: 'Run now' }).click();
  await page.getByRole('button', { name: 'Yes, run now' }).click();
  const queued = await page.getByText(/Fire \d+-\d+ queued\./).textContent();
  const fireId = /Fire (\d+-\d+) queued/.exec(queued ?? '')![1];
  expect(await pollUntil(() => receiver.deliveries.some((d) => d.fireId === fireId), 15_000)).toBe(true);
  await page.locator(`table.records tr[data-fire-id="${fireId}"] .s-succeeded`).waitFor({ timeout: 15_000 });

  // The list: next fire and last outcome per timer; then the page as a phone shows it.
  await page.getByRole('main').getByRole('link', { name: '← Timers' }).click();
  const row = page.locator('table.list tr', { hasText: 'heartbeat-edited' });
  await row.locator('.s-succeeded').waitFor();
  // The next fire comes from each row's own GET, which may answer after the last outcome.
  await row.locator('td[data-label="Next fire"] time').waitFor();
  expect(await row.locator('td[data-label="Next fire"] time').count()).toBe(1);
  await consoleShot(page, 'timers');
  await row.getByRole('link', { name: 'heartbeat-edited' }).click();
  await page.locator('ol.preview li').first().waitFor();
  await page.setViewportSize({ width: 390, height: 844 });
  await consoleShot(page, 'timer-phone');
  await page.setViewportSize({ width: 1280, height: 860 });

  // Disable and delete, each confirmed.
  await page.getByRole('button', { name: 'Disable' }).click();
  await page.getByRole('button', { name: 'Yes, disable' }).click();
  await page.getByText('Disabled.').waitFor();
  expect((await stack.api.getTimer(APP, id)) as { status: number }).toMatchObject({ status: 1 });
  await page.getByRole('button', { name: 'Delete' }).click();
  await page.getByRole('button', { name: 'Yes, delete' }).click();
  await page.getByText('No timers match.').waitFor();

  // Two one-shot fires whose receiver answers 500, one attempt only: two dead letters (read while the
  // overview shows), one to replay and one to purge.
  const runAt = nextSecond(2_000);
  const oneShot = (name: string) => stack.api.createEnabled({ app: APP, name, runAt, notifyHTTPParam: { url: receiver.url('/dlq'), method: 'POST' }, retryPolicy: { maxAttempts: 1 } });
  const [failing, doomed] = await Promise.all([oneShot('dead-letter'), oneShot('dead-letter-purged')]);
  const letter = `${failing}-${runAt}`;
  const purged = `${doomed}-${runAt}`;
  const recover = receiver.failTimer(failing, 500);
  receiver.failTimer(doomed, 500);

  // The overview of the last hour from the api's overview endpoint (a deleted timer's fires included):
  // figures, the fires-per-second bars and the lateness lines of the minutes with deliveries.
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Overview' }).click();
  const delivered = page.locator('.figure[data-figure="Delivered"] strong');
  await delivered.waitFor();
  expect(Number(await delivered.textContent())).toBeGreaterThanOrEqual(2);
  expect(await page.locator('.figure[data-figure="Lateness p99"] strong').textContent()).toMatch(/^\d+ ms$/);
  expect(await page.locator('[data-chart="fires"] rect.o-delivered').count()).toBeGreaterThanOrEqual(1);
  expect(await page.locator('[data-chart="lateness"] path.p99').getAttribute('d')).toMatch(/^M[\d.]+ [\d.]+/);
  expect(await page.locator('[data-chart="lateness"] svg').getAttribute('aria-label')).toMatch(/overall p50 \d+ ms, p99 \d+ ms$/);
  // The chart's numbers as a table, opened from the keyboard.
  await page.getByText('The minutes with fires as a table').focus();
  await page.keyboard.press('Enter');
  await page.locator('table.minutes tbody tr').first().waitFor();
  await consoleShot(page, 'overview');

  // Dead letters: the failed fire listed; replayed (confirmed) after the receiver recovered, it arrives
  // once more, exactly that fire, and leaves the list.
  const dead = async () => (await stack.api.call<{ data: { fireId: string }[] }>('GET', `/api/app/v1/dlq?app=${APP}`)).data;
  expect(await pollUntil(async () => (await dead()).filter((l) => l.fireId === letter || l.fireId === purged).length === 2, 20_000)).toBe(true);
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Dead letters' }).click();
  const letterRow = page.locator(`table.letters tr[data-fire-id="${letter}"]`);
  await letterRow.waitFor();
  expect(await letterRow.locator('td[data-label="Last error"]').textContent()).toContain('HTTP 500');
  expect(await letterRow.locator('td[data-label="Run time"] time').getAttribute('title')).toMatch(/ UTC$/);
  await letterRow.getByRole('checkbox', { name: `Select fire ${letter}` }).check();
  await consoleShot(page, 'dead-letters');
  recover();
  await page.getByRole('button', { name: 'Replay selected' }).click();
  await page.getByRole('button', { name: 'Yes, replay selected' }).click();
  await page.getByText(`Replayed 1 (${letter}).`).waitFor();
  await letterRow.waitFor({ state: 'detached' });
  // The other one purged (confirmed): gone from the list, not delivered, its failed record kept.
  await page.getByRole('checkbox', { name: `Select fire ${purged}` }).check();
  await page.getByRole('button', { name: 'Purge selected' }).click();
  await page.getByRole('button', { name: 'Yes, purge selected' }).click();
  await page.getByText('Purged 1; their failed records stay.').waitFor();
  await page.getByText('No dead letters.').waitFor();
  expect(await pollUntil(() => receiver.forTimer(failing).some((d) => d.status === 200), 15_000)).toBe(true);
  const got = receiver.forTimer(failing).map((d) => `${d.fireId} ${d.status}`);
  expect(got).toEqual([`${letter} 500`, `${letter} 200`]);
  expect(await dead()).toEqual([]);
  expect(receiver.forTimer(doomed).map((d) => `${d.fireId} ${d.status}`)).toEqual([`${purged} 500`]);
  const kept = await stack.api.call<{ data: { status: number }[] }>('GET', `/api/task/v1/records?app=${APP}&fireID=${purged}`);
  expect(kept.data.map((r) => r.status)).toEqual([3]);

  // Apps and tokens (the admin token signed in): a new app and a token for it, shown once, that works.
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Apps and tokens' }).click();
  const createApp = page.getByRole('region', { name: 'Create an app' });
  await createApp.getByLabel('App', { exact: true }).fill('console-e2e-made');
  await createApp.getByRole('button', { name: 'Create app' }).click();
  await createApp.getByText('App "console-e2e-made" created.').waitFor();
  const issue = page.getByRole('region', { name: 'Issue a token' });
  await issue.getByLabel('App', { exact: true }).fill('console-e2e-made');
  await issue.getByLabel('Label').fill('browser test');
  await issue.getByRole('button', { name: 'Issue token' }).click();
  const issued = (await issue.locator('code.secret').textContent()) ?? '';
  expect(issued).toMatch(/^tmr_/);
  const withIssued = () => fetch(`http://127.0.0.1:${stack.port('api')}/api/timer/v1/defs?app=console-e2e-made`, { headers: { Authorization: `Bearer ${issued}` } });
  expect((await withIssued()).status).toBe(200);
  const tokenId = /Token (\d+) issued/.exec((await issue.getByText(/Token \d+ issued/).textContent()) ?? '')![1];

  // Listed with the app's other tokens (never the token itself), revoked from its row (confirmed):
  // refused from then on.
  const tokens = page.getByRole('region', { name: 'Tokens of console-e2e-made' });
  const tokenRow = tokens.locator(`tr[data-token-id="${tokenId}"]`);
  expect(await tokenRow.locator('td[data-label="Label"]').textContent()).toBe('browser test');
  expect(await tokens.textContent()).not.toContain(issued);
  await page.locator('table.apps tr[data-app="console-e2e-made"]').waitFor();
  await consoleShot(page, 'admin');
  await tokenRow.getByRole('button', { name: 'Revoke' }).click();
  await tokenRow.getByRole('button', { name: 'Yes, revoke' }).click();
  await tokens.getByText(`Token ${tokenId} of app "console-e2e-made" revoked`).waitFor();
  await tokenRow.waitFor({ state: 'detached' });
  expect((await withIssued()).status).toBe(401);

  // Rotate the signing secret (confirmed): the new one shown once, gone once the page is left.
  const rotate = page.getByRole('region', { name: 'Rotate the signing secret' });
  await rotate.getByLabel('App', { exact: true }).fill('console-e2e-made');
  await rotate.getByRole('button', { name: 'Rotate secret' }).click();
  await rotate.getByRole('button', { name: 'Yes, rotate secret' }).click();
  const secret = (await rotate.locator('code.secret[data-secret="Signing secret"]').textContent()) ?? '';
  expect(secret.length).toBeGreaterThanOrEqual(16);
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Timers' }).click();
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Apps and tokens' }).click();
  await page.getByRole('region', { name: 'Rotate the signing secret' }).waitFor();
  expect(await page.locator('code.secret').count()).toBe(0);

  // Every page at a phone's width (390 x 844): nothing wider than the screen.
  await page.setViewportSize({ width: 390, height: 844 });
  const pages: [string, string][] = [
    ['/timers', `Timers of ${APP}`],
    [`/timers/${failing}`, 'dead-letter'],
    ['/new', `New timer in ${APP}`],
    ['/overview', `Overview of ${APP}`],
    ['/dead-letters', `Dead letters of ${APP}`],
    ['/admin', 'Apps and tokens'],
  ];
  for (const [path, heading] of pages) {
    await page.goto(`${base}${path}`);
    await page.getByRole('heading', { name: heading, exact: true }).waitFor();
    if (path === '/overview') await page.locator('[data-chart="fires"]').waitFor();
    const overflow = await page.evaluate('document.documentElement.scrollWidth - window.innerWidth');
    expect({ path, overflow }).toEqual({ path, overflow: 0 });
    if (path === '/overview') {
      await page.getByRole('heading', { name: 'Per minute' }).scrollIntoViewIfNeeded();
      await consoleShot(page, 'overview-phone');
    }
  }
  await page.setViewportSize({ width: 1280, height: 860 });

  // Sign out: the token leaves the tab.
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.getByRole('heading', { name: 'Sign in' }).waitFor();
  expect(await page.evaluate('window.sessionStorage.length')).toBe(0);

  expect(rig.problems).toEqual([]);
  // The refused create (400) and the stale edit (409), nothing else.
  expect(rig.failedLoads).toEqual(['400 /api/timer/v1/def', '409 /api/timer/v1/def']);
});
