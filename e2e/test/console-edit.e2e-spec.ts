import type { Page } from 'playwright-core';
import { ConsoleRig, consoleShot, pollUntil } from '../support';

// The console's editing in a real headless Chromium (Debian's; playwright-core never downloads one)
// against the built roles: every refused field of a create shown at once at its field, the preview of
// a schedule before it exists (in the timer's zone and the viewer's, each named), a timer's headers
// and retries edited, an older version compared and restored, the upcoming fires moving on after a
// fire, three timers disabled in one bulk action, and these pages at a phone's width. Any console or
// page error fails it; the browser's "Failed to load resource" lines may name only the one refusal the
// test provokes (400). A second test attaches a calendar in the forms and sees its marks.
// TIMER_CONSOLE_SCREENSHOTS=1 rewrites its screenshots in docs/console/.
jest.setTimeout(120_000);

const APP = 'console-edit';
const TOKEN = 'console-edit-admin-token-0123456789';

const rig = new ConsoleRig();
beforeAll(() => rig.start(TOKEN));
afterAll(() => rig.stop());

/** Signs a new tab in (the session is per tab) on the new timer page. */
async function signInToNew(page: Page): Promise<void> {
  await page.goto(`${rig.base}/new`);
  await page.getByLabel('Token').fill(TOKEN);
  await page.getByLabel('App').fill(APP);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: `New timer in ${APP}` }).waitFor();
}

/** A cron timer's name, schedule and zone in the form, its callback `/<name>` on the receiver. */
async function fillSchedule(page: Page, name: string, cron: string, zone: string): Promise<void> {
  await page.getByLabel('Name', { exact: true }).fill(name);
  await page.locator('input[name="cron"]').fill(cron);
  await page.getByLabel('Time zone').fill(zone);
  await page.getByLabel('URL', { exact: true }).fill(rig.receiver.url(`/${name}`));
}

it('shows every refused field at once, previews before create in both zones, edits headers and retries, restores a version with its diff, refreshes the next fires, bulk-disables three timers, and fits a phone', async () => {
  const { base, stack, receiver } = rig;
  const page = await rig.newPage();
  const field = (label: string) => page.locator('.field', { has: page.getByLabel(label, { exact: true }) });

  await signInToNew(page);

  // Four fields wrong at once: each message under its own field, all in one answer, nothing created.
  await page.getByLabel('Name', { exact: true }).fill('');
  await page.getByLabel('URL', { exact: true }).fill('ftp://example.com/x');
  await page.getByLabel('Headers').fill('Bad Name: x');
  await page.getByLabel('Max attempts').fill('50');
  await page.getByRole('button', { name: 'Create timer' }).click();
  await page.getByText('4 fields need a change: Name, URL, Headers, Max attempts.').waitFor();
  expect(await field('Name').locator('.field-error').textContent()).toMatch(/^name /);
  expect(await field('URL').locator('.field-error').textContent()).toMatch(/^notifyHTTPParam\.url /);
  expect(await field('Headers').locator('.field-error').textContent()).toContain('"Bad Name" is not a valid header name');
  expect(await field('Max attempts').locator('.field-error').textContent()).toMatch(/^retryPolicy\.maxAttempts must not be greater than 10/);
  expect(await page.getByLabel('Max attempts').getAttribute('aria-invalid')).toBe('true');
  expect(await page.locator('.field.invalid').count()).toBe(4);
  await consoleShot(page, 'form-errors', { fullPage: true });
  expect((await stack.api.call<{ total: number }>('GET', `/api/timer/v1/defs?app=${APP}`)).total).toBe(0);

  // The schedule's next fires before anything exists, in New York and in Berlin, each zone named.
  await fillSchedule(page, 'report', '0 30 9 * * 1-5', 'America/New_York');
  await page.getByLabel('Headers').fill('');
  await page.getByLabel('Max attempts').fill('3');
  await page.getByRole('button', { name: 'Preview the next fires' }).click();
  const preview = page.locator('table.preview-table');
  await preview.locator('tbody tr').nth(4).waitFor();
  expect(await preview.locator('thead').textContent()).toBe("In the timer's zone (America/New_York)In your zone (Europe/Berlin)");
  const firstRow = preview.locator('tbody tr').first();
  expect(await firstRow.locator('td').first().textContent()).toMatch(/09:30:00 America\/New_York$/);
  expect(await firstRow.locator('td').nth(1).textContent()).toMatch(/1[45]:30:00 Europe\/Berlin$/);
  expect(await stack.api.call<{ total: number }>('GET', `/api/timer/v1/defs?app=${APP}`)).toMatchObject({ total: 0 });
  await consoleShot(page, 'create-preview', { fullPage: true });
  await page.getByRole('button', { name: 'Create timer' }).click();
  await page.waitForURL(/\/console\/timers\/\d+$/);
  const id = page.url().split('/').pop()!;

  // The timer's page: its upcoming fires named in its zone and in the viewer's.
  const upcoming = page.locator('ol.preview li').first();
  await upcoming.waitFor();
  expect(await upcoming.textContent()).toMatch(/09:30:00 GMT-[45] America\/New_York = .* 1[45]:30:00 Europe\/Berlin/);

  // Edit the headers and the retries: only those change (PATCH), saved as version 2.
  await page.getByRole('button', { name: 'Edit' }).click();
  await page.getByLabel('Headers').fill('X-Team: billing\nX-Team: reports\nAuthorization: Bearer abc');
  await page.getByLabel('Max attempts').fill('5');
  await page.getByLabel('Backoff (ms)').fill('2000');
  await page.getByLabel('Result webhook URL').fill(receiver.url('/answers'));
  await page.getByRole('button', { name: 'Save changes' }).click();
  await page.getByText('Saved as version 2.').waitFor();
  const edited = (await stack.api.getTimer(APP, id)) as { version: number; retryPolicy: unknown; notifyHTTPParam: { header: unknown } };
  expect(edited).toMatchObject({
    version: 2,
    retryPolicy: { maxAttempts: 5, backoffMs: 2000 },
    notifyHTTPParam: { header: { 'X-Team': ['billing', 'reports'], Authorization: ['Bearer abc'] } },
    resultWebhook: { url: receiver.url('/answers') },
  });
  expect(await page.locator('pre.headers').textContent()).toBe('X-Team: billing\nX-Team: reports\nAuthorization: Bearer abc');

  // Versions: 1 against 2 shows exactly what the edit changed; restoring 1 writes version 3 with its definition.
  const versions = page.getByRole('region', { name: 'Versions' });
  await versions.locator('tr[data-version="2"]').waitFor();
  await versions.getByLabel('Version', { exact: true }).selectOption('1');
  await versions.getByLabel('Compared with').selectOption('2');
  const diff = page.locator('table.diff');
  await diff.waitFor();
  expect(await diff.locator('tbody tr').evaluateAll((rows) => rows.map((r) => r.getAttribute('data-field')))).toEqual(['Headers', 'Max attempts', 'Backoff (ms)', 'Result webhook']);
  expect(await diff.locator('tr[data-field="Max attempts"] td').allTextContents()).toEqual(['3', '5']);
  await versions.scrollIntoViewIfNeeded();
  await consoleShot(page, 'versions', { fullPage: true });
  await versions.getByRole('button', { name: 'Restore version 1' }).click();
  await versions.getByRole('button', { name: 'Yes, restore version 1' }).click();
  await page.getByText('Version 1 restored as version 3.').waitFor();
  const restored = (await stack.api.getTimer(APP, id)) as { version: number; retryPolicy: unknown; notifyHTTPParam: Record<string, unknown> };
  expect(restored).toMatchObject({ version: 3, retryPolicy: { maxAttempts: 3, backoffMs: 1000 }, resultWebhook: null });
  expect(restored.notifyHTTPParam.header).toBeUndefined();
  await versions.locator('tr[data-version="3"]').waitFor();

  // The upcoming fires move on after a fire, without a reload; each record shows what the receiver answered.
  receiver.respond((d) => (d.path === '/ticker' ? { status: 202, headers: { 'content-type': 'application/json' }, body: '{"accepted":true}' } : undefined));
  const tickerId = await stack.api.createEnabled({ app: APP, name: 'ticker', every: '2s', notifyHTTPParam: { url: receiver.url('/ticker'), method: 'POST' } });
  await page.goto(`${base}/timers/${tickerId}`);
  const firstFire = page.locator('ol.preview li time').first();
  await firstFire.waitFor();
  const before = await firstFire.getAttribute('datetime');
  expect(await pollUntil(async () => (await firstFire.getAttribute('datetime')) !== before, 10_000)).toBe(true);
  expect(Date.parse((await firstFire.getAttribute('datetime'))!)).toBeGreaterThan(Date.parse(before!));
  await stack.api.unable(APP, tickerId);
  const answer = page.locator('table.records td[data-label="Answer"] details').first();
  await answer.waitFor({ timeout: 15_000 });
  expect(await answer.locator('summary').textContent()).toBe('HTTP 202, 17 characters');
  await answer.locator('summary').click();
  expect(await answer.locator('pre.headers').textContent()).toBe('content-type: application/json');
  expect(await answer.locator('pre.body').textContent()).toBe('{"accepted":true}');
  await page.locator('table.records').scrollIntoViewIfNeeded();
  await consoleShot(page, 'record-answer');

  // Three timers disabled in one action: destructive buttons wait for a selection, then a confirmation.
  const bulkIds = await Promise.all(['bulk-a', 'bulk-b', 'bulk-c'].map((name) => stack.api.createEnabled({ app: APP, name, cron: '0 0 * * *', notifyHTTPParam: { url: receiver.url('/bulk'), method: 'POST' } })));
  await page.goto(`${base}/timers?name=bulk`);
  const bulk = page.getByRole('group', { name: 'Act on timers' });
  await page.locator('table.timers tbody tr').nth(2).waitFor();
  for (const action of ['Enable', 'Disable', 'Delete']) expect(await bulk.getByRole('button', { name: action, exact: true }).isDisabled()).toBe(true);
  await page.getByRole('checkbox', { name: 'Select every timer on this page' }).check();
  await bulk.getByText('Selected (3)').waitFor();
  await bulk.getByRole('button', { name: 'Disable', exact: true }).click();
  await bulk.getByText('Disable 3 selected timer(s)? Their pending fires are removed.').waitFor();
  await consoleShot(page, 'bulk', { fullPage: true });
  await bulk.getByRole('button', { name: 'Yes, disable' }).click();
  await page.getByText('Disabled 3 of 3 timer(s).').waitFor();
  for (const bulkId of bulkIds) expect(await stack.api.getTimer(APP, bulkId)).toMatchObject({ status: 1 });
  await page.locator('table.timers .s-disabled').nth(2).waitFor();
  expect(await page.locator('table.timers .s-enabled').count()).toBe(0);
  expect(await bulk.getByRole('button', { name: 'Delete', exact: true }).isDisabled()).toBe(true);

  // The pages of this test at a phone's width: nothing wider than the screen.
  await page.setViewportSize({ width: 390, height: 844 });
  for (const [path, heading] of [
    ['/timers?name=bulk', `Timers of ${APP}`],
    [`/timers/${id}`, 'report'],
    ['/new', `New timer in ${APP}`],
  ]) {
    await page.goto(`${base}${path}`);
    await page.getByRole('heading', { name: heading, exact: true }).waitFor();
    if (path.startsWith('/timers/')) {
      await page.locator('table.versions tr[data-version="3"]').waitFor();
      await page.getByRole('region', { name: 'Versions' }).getByLabel('Version', { exact: true }).selectOption('2');
      await page.locator('table.diff').waitFor();
    }
    const overflow = await page.evaluate('document.documentElement.scrollWidth - window.innerWidth');
    expect({ path, overflow }).toEqual({ path, overflow: 0 });
  }
  await page.getByRole('button', { name: 'Preview the next fires' }).scrollIntoViewIfNeeded();

  expect(rig.problems).toEqual([]);
  expect(rig.failedLoads).toEqual(['400 /api/timer/v1/def']);
});

it('attaches a calendar in the form: the preview and the upcoming fires mark the excluded ones, an edit moves them to the next business day', async () => {
  const { stack } = rig;
  const [problems, failedLoads] = [rig.problems.length, rig.failedLoads.length];
  await stack.api.call('POST', '/api/app/v1/calendars', { app: APP, name: 'weekend', exclude: { weekdays: [6, 7] } });
  const page = await rig.newPage();
  await signInToNew(page);

  // Saturdays at 09:00 with the weekend calendar: every fire of the preview is skipped.
  await fillSchedule(page, 'saturdays', '0 0 9 * * 6', 'Europe/Berlin');
  await page.getByLabel('Calendars').fill('weekend');
  await page.getByLabel('On an excluded day').selectOption('skip');
  await page.getByRole('button', { name: 'Preview the next fires' }).click();
  const marks = page.locator('table.preview-table tbody tr .calendar-mark');
  await marks.nth(4).waitFor();
  expect(await marks.allTextContents()).toEqual(Array(5).fill(' skipped: excluded by calendar weekend'));
  await page.getByRole('button', { name: 'Create timer' }).click();
  await page.waitForURL(/\/console\/timers\/\d+$/);
  const id = page.url().split('/').pop()!;
  expect(await stack.api.getTimer(APP, id)).toMatchObject({ calendars: ['weekend'], onExcluded: 'skip' });
  const upcoming = page.locator('ol.preview li .calendar-mark').first();
  await upcoming.waitFor();
  expect(await upcoming.textContent()).toBe(' skipped: excluded by calendar weekend');

  // The edit form sets onExcluded: the fires move to Monday at 09:00, each marked with the Saturday it came from.
  await page.getByRole('button', { name: 'Edit' }).click();
  await page.getByLabel('On an excluded day').selectOption('nextBusinessDay');
  await page.getByRole('button', { name: 'Save changes' }).click();
  await page.getByText('Saved as version 2.').waitFor();
  expect(await stack.api.getTimer(APP, id)).toMatchObject({ version: 2, calendars: ['weekend'], onExcluded: 'nextBusinessDay' });
  const moved = page.locator('ol.preview li', { has: page.locator('.calendar-mark', { hasText: 'moved from' }) }).first();
  await moved.waitFor();
  expect(await moved.textContent()).toMatch(/09:00:00 .*moved from .*09:00:00.*\(calendar weekend\)/);
  const [at, from] = await Promise.all([moved.locator('time').first().getAttribute('datetime'), moved.locator('.calendar-mark time').getAttribute('datetime')]);
  // Two days later (give or take the hour of a DST change between them).
  expect([new Date(at!).getUTCDay(), new Date(from!).getUTCDay(), Math.round((Date.parse(at!) - Date.parse(from!)) / 86_400_000)]).toEqual([1, 6, 2]);

  expect(rig.problems.slice(problems)).toEqual([]);
  expect(rig.failedLoads.slice(failedLoads)).toEqual([]);
});
