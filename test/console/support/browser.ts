/**
 * A headless Chromium for the console's tests: Debian's `chromium` package (installed by
 * `.ci/run`), driven by playwright-core, no browser download. Each page's errors, failed requests
 * and console errors (a CSP violation is one) are kept, so a test can assert there were none.
 * With SCREENSHOTS_DIR set (`npm run screenshots`), `shoot` saves the page as a PNG there.
 */
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { chromium, type Browser, type BrowserContext, type Page } from 'playwright-core';
import { afterAll, beforeAll } from 'vitest';

/** Where Debian's package puts the browser; CHROMIUM_PATH overrides it. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * The flags a closed network and a container need: no sandbox (no user namespaces here), no GPU,
 * and none of the background connections Chromium makes on its own.
 */
const CHROMIUM_ARGS = ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync', '--disable-dev-shm-usage'];

/** A page and what went wrong on it. */
export interface WatchedPage {
  readonly page: Page;
  /** Uncaught exceptions, console errors and failed requests, in order. */
  readonly problems: string[];
}

export interface Chromium {
  /** A new page in a new context (its own storage), watched for problems. */
  readonly newPage: () => Promise<WatchedPage>;
}

/** Launches Chromium for the enclosing `describe`, closing it after. */
export function useChromium(): () => Chromium {
  let browser: Browser | undefined;
  const contexts: BrowserContext[] = [];
  beforeAll(async () => {
    if (!existsSync(CHROMIUM_PATH)) {
      throw new Error(`The console's browser tests drive Debian's chromium at ${CHROMIUM_PATH}, which is missing: install it (sudo apt-get install chromium) or set CHROMIUM_PATH.`);
    }
    // playwright gives the browser a new empty profile of its own, and removes it on close.
    browser = await chromium.launch({ executablePath: CHROMIUM_PATH, args: CHROMIUM_ARGS });
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
  });
  return () => ({
    newPage: async () => {
      if (browser === undefined) throw new Error('Chromium runs only between the beforeAll and afterAll of its describe.');
      const context = await browser.newContext({ viewport: { width: 1366, height: 860 }, colorScheme: 'light', locale: 'en-GB', timezoneId: 'UTC' });
      contexts.push(context);
      const page = await context.newPage();
      const problems: string[] = [];
      page.on('pageerror', (error) => problems.push(`page error: ${error.message}`));
      page.on('console', (message) => {
        if (message.type() === 'error') problems.push(`console error: ${message.text()}`);
      });
      page.on('requestfailed', (request) => {
        // A read in flight when the test navigates away is cancelled by the browser (ERR_ABORTED): not a failure of the page.
        const reason = request.failure()?.errorText ?? '';
        if (reason !== 'net::ERR_ABORTED') problems.push(`request failed: ${request.method()} ${request.url()} ${reason}`);
      });
      return { page, problems };
    },
  });
}

/** Saves the page as `<name>.png` in SCREENSHOTS_DIR, when set (`npm run screenshots`). */
export async function shoot(page: Page, name: string): Promise<void> {
  const directory = process.env.SCREENSHOTS_DIR;
  if (directory === undefined || directory === '') return;
  await mkdir(directory, { recursive: true });
  await page.screenshot({ path: join(directory, `${name}.png`), fullPage: true });
}
