import { spawnSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { Browser, BrowserContext, chromium, Page } from 'playwright-core';
import { Receiver } from './receiver';
import { ROOT_DIR, Stack } from './stack';

/** Chromium's own log line for a 4xx/5xx answer: the console tests allow only the refusals they provoke. */
const FAILED_LOAD = /^Failed to load resource: the server responded with a status of (\d+)/;

/** Where TIMER_CONSOLE_SCREENSHOTS=1 writes the console's screenshots (docs/console.md shows them). */
export const CONSOLE_SHOTS = process.env.TIMER_CONSOLE_SCREENSHOTS === '1' ? join(ROOT_DIR, 'docs/console') : undefined;

/**
 * What a console browser test runs against: the built roles (Stack), a callback Receiver and Debian's
 * headless Chromium (deploy/local/chromium.sh installs it; playwright-core never downloads one), the
 * viewer in Europe/Berlin with an en-GB locale so times on screen do not depend on the machine. Pages
 * opened here collect console and page errors (`problems`) and the paths of failed loads.
 */
export class ConsoleRig {
  private parts: { stack?: Stack; receiver?: Receiver; browser?: Browser; context?: BrowserContext } = {};
  readonly problems: string[] = [];
  readonly failedLoads: string[] = [];

  /** Starts the three at once; each kept as it comes up, so `stop` closes what started even when another failed. */
  async start(adminToken: string): Promise<void> {
    if (CONSOLE_SHOTS) mkdirSync(CONSOLE_SHOTS, { recursive: true });
    const r = spawnSync('bash', [join(ROOT_DIR, 'deploy/local/chromium.sh')], { encoding: 'utf8' });
    if (r.status !== 0) throw new Error(`deploy/local/chromium.sh failed: ${r.stderr}`);
    const executablePath = r.stdout.trim().split('\n').pop()!;
    const started = await Promise.allSettled([
      Receiver.start().then((x) => (this.parts.receiver = x)),
      Stack.start({ adminToken, env: { TIMER_WINDOW_MINUTES: '5' } }).then((x) => (this.parts.stack = x)),
      // Root in a container has no user namespaces for Chromium's sandbox.
      chromium.launch({ executablePath, headless: true, args: ['--no-sandbox'] }).then((x) => (this.parts.browser = x)),
    ]);
    for (const s of started) if (s.status === 'rejected') throw s.reason;
    this.parts.context = await this.browser.newContext({ viewport: { width: 1280, height: 860 }, timezoneId: 'Europe/Berlin', locale: 'en-GB' });
  }

  async stop(): Promise<void> {
    await this.parts.browser?.close();
    await Promise.all([this.parts.stack?.stop(), this.parts.receiver?.close()]);
  }

  get stack(): Stack {
    return this.started(this.parts.stack, 'stack');
  }

  get receiver(): Receiver {
    return this.started(this.parts.receiver, 'receiver');
  }

  get browser(): Browser {
    return this.started(this.parts.browser, 'browser');
  }

  /** The console's base URL on the api. */
  get base(): string {
    return `http://127.0.0.1:${this.stack.port('api')}/console`;
  }

  /** A new tab whose console errors, page errors and failed loads are collected. */
  async newPage(): Promise<Page> {
    const page = await this.started(this.parts.context, 'context').newPage();
    page.on('console', (m) => {
      if (m.type() !== 'error') return;
      const failed = FAILED_LOAD.exec(m.text());
      if (failed) this.failedLoads.push(`${failed[1]} ${new URL(m.location().url).pathname}`);
      else this.problems.push(`console error: ${m.text()} (${m.location().url})`);
    });
    page.on('pageerror', (e) => this.problems.push(`page error: ${e.message}`));
    return page;
  }

  private started<T>(part: T | undefined, name: string): T {
    if (part === undefined) throw new Error(`the console rig's ${name} has not started`);
    return part;
  }
}

/** Writes a screenshot into docs/console/ when TIMER_CONSOLE_SCREENSHOTS=1. */
export async function consoleShot(page: Page, name: string, opts: { fullPage?: boolean } = {}): Promise<void> {
  if (CONSOLE_SHOTS) await page.screenshot({ path: join(CONSOLE_SHOTS, `${name}.png`), fullPage: opts.fullPage });
}
