import { mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium } from 'playwright-core';
import type { Browser, ConsoleMessage, Page } from 'playwright-core';

/** Where `screenshot(name)` writes its PNGs (git-ignored). */
export const SCREENSHOT_DIR = path.resolve(__dirname, '..', '..', 'test-results', 'screenshots');

/** Debian's Chromium unless `CHROMIUM_PATH` names another. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * Headless Chromium. As root it needs `--no-sandbox`; the background services are switched off, since this
 * machine reaches no outside host.
 */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [
      ...(process.getuid?.() === 0 ? ['--no-sandbox'] : []),
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
      '--disable-dev-shm-usage',
    ],
  });
}

export interface TestPage {
  page: Page;
  /** Console messages of type error, as `text` (network failures, CSP refusals, React errors). */
  consoleErrors: string[];
  /** Uncaught exceptions in the page. */
  pageErrors: string[];
  /** Content-Security-Policy violations the page reported (`securitypolicyviolation` events and console). */
  cspViolations: string[];
  /** Writes `<SCREENSHOT_DIR>/<name>.png` of the whole page and returns its path. */
  screenshot(name: string): Promise<string>;
  close(): Promise<void>;
}

/**
 * A fresh page in its own browser context (its own cookies), laptop-sized, that records console errors,
 * page errors and CSP violations.
 */
export async function openPage(
  browser: Browser,
  options: {
    viewport?: { width: number; height: number };
    /** Lets the test inject its own inline scripts past the app's CSP (the accessibility suite only). */
    bypassCSP?: boolean;
  } = {},
) {
  const context = await browser.newContext({
    viewport: options.viewport ?? { width: 1366, height: 850 },
    bypassCSP: options.bypassCSP ?? false,
  });
  const page = await context.newPage();
  const consoleErrors: string[] = [];
  const pageErrors: string[] = [];
  const cspViolations: string[] = [];
  await page.exposeFunction('__svcReportCspViolation', (text: string) => cspViolations.push(text));
  // Runs in the page before its own scripts (as a string: this file is compiled without the DOM's types).
  await page.addInitScript({
    content: `document.addEventListener('securitypolicyviolation', (event) => {
      window.__svcReportCspViolation(
        event.violatedDirective + ' blocked ' + (event.blockedURI || 'inline') + ' (' + event.sourceFile + ':' + event.lineNumber + ')',
      );
    });`,
  });
  page.on('console', (message: ConsoleMessage) => {
    if (message.type() !== 'error') return;
    const text = message.text();
    consoleErrors.push(text);
    if (/Content Security Policy/i.test(text)) cspViolations.push(text);
  });
  page.on('pageerror', (error) => pageErrors.push(error.message));
  const result: TestPage = {
    page,
    consoleErrors,
    pageErrors,
    cspViolations,
    async screenshot(name: string) {
      mkdirSync(SCREENSHOT_DIR, { recursive: true });
      const file = path.join(SCREENSHOT_DIR, `${name}.png`);
      await page.screenshot({ path: file, fullPage: true });
      return file;
    },
    close: () => context.close(),
  };
  return result;
}

/** Signs in through the sign-in page and waits for the workspace's page (`/w/<slug>`). */
export async function signIn(page: Page, baseUrl: string, credentials: { email: string; password: string }) {
  await page.goto(`${baseUrl}/sign-in`);
  await page.getByLabel('Email').fill(credentials.email);
  await page.getByLabel('Password').fill(credentials.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL(/\/w\/[^/]+/);
  // Attached, not visible: on small screens the navigation waits behind the menu button.
  await page.locator('nav[aria-label="Main"]').waitFor({ state: 'attached' });
}

/** A page already signed in as `credentials` (default: the stack's owner), on the workspace's home page. */
export async function signedInPage(
  browser: Browser,
  baseUrl: string,
  credentials: { email: string; password: string },
): Promise<TestPage> {
  const test = await openPage(browser);
  await signIn(test.page, baseUrl, credentials);
  return test;
}

/** Nothing the page did was refused by its policy, nothing threw, and it logged no error but the allowed ones. */
export function expectCleanPage(test: TestPage, allowedConsoleErrors: RegExp[] = []): void {
  expect(test.cspViolations).toEqual([]);
  expect(test.pageErrors).toEqual([]);
  expect(test.consoleErrors.filter((text) => !allowedConsoleErrors.some((re) => re.test(text)))).toEqual([]);
}
