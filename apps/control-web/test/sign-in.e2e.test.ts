import { randomBytes } from 'node:crypto';
import type { Browser } from 'playwright-core';
import { expectCleanPage, launchBrowser, openPage, signIn } from './support/browser';
import { addViewer, hubData, ownerCredentials, startBrowserStack } from './support/stack';
import type { BrowserStack } from './support/stack';

jest.setTimeout(180_000);

let stack: BrowserStack;
let browser: Browser;
const suffix = randomBytes(3).toString('hex');
const second = { slug: `second-${suffix}`, name: `Second ${suffix}` };
const viewer = {
  email: `viewer-${suffix}@dev.svc.local`,
  password: `viewer-${randomBytes(12).toString('hex')}`,
};

beforeAll(async () => {
  stack = await startBrowserStack('websignin');
  browser = await launchBrowser();
  await hubData(stack, 'POST', '/api/v1/workspaces', second);
  await addViewer(stack, viewer);
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
}, 120_000);

const owner = () => ownerCredentials(stack);

describe('the control web server', () => {
  test('when the page is fetched, then it carries a strict Content-Security-Policy and the security headers', async () => {
    const response = await fetch(`${stack.baseUrl}/`, { headers: { accept: 'text/html' } });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/text\/html/);
    const csp = response.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toMatch(/unsafe-inline|unsafe-eval/);
    const router = new URL(stack.file.console_router_url);
    expect(csp).toContain(`connect-src 'self' ${router.origin} ws://${router.host}`);
    expect(response.headers.get('x-content-type-options')).toBe('nosniff');
    expect(response.headers.get('x-frame-options')).toBe('DENY');
    expect(response.headers.get('referrer-policy')).toBe('no-referrer');
    const html = await response.text();
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect((await fetch(`${stack.baseUrl}/healthz`)).status).toBe(200);
    expect((await fetch(`${stack.baseUrl}/readyz`)).status).toBe(200);
  });

  test('when a path outside the public API is asked for, then it is not forwarded (404 route_not_forwarded)', async () => {
    for (const path of [
      '/hub/internal/v1/roster',
      '/hub/api/v1/../internal/v1/roster',
      '/hub/api/v1/%2e%2e/internal/v1/roster',
      '/workflow/internal/v1/anything',
      '/hub/openapi.json',
    ]) {
      const response = await fetch(`${stack.baseUrl}${path}`);
      expect({ path, status: response.status }).toEqual({ path, status: 404 });
      expect(response.headers.get('content-type')).toMatch(/application\/problem\+json/);
      // The server serves no page per code: its problems say so with `about:blank`.
      expect(await response.json()).toMatchObject({ code: 'route_not_forwarded', type: 'about:blank' });
    }
    // Sign-in goes through POST /session only: the token never reaches the page.
    const login = await fetch(`${stack.baseUrl}/hub/api/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-svc-csrf': '1' },
      body: JSON.stringify(owner()),
    });
    expect(login.status).toBe(404);
  });

  test('when the public API is called without a session, then the hub and the Workflow API answer 401 through the server', async () => {
    const me = await fetch(`${stack.baseUrl}/hub/api/v1/me`);
    expect(me.status).toBe(401);
    expect(me.headers.get('content-type')).toMatch(/application\/problem\+json/);
    const projects = await fetch(
      `${stack.baseUrl}/workflow/api/v1/projects/${stack.file.project.id}/workflow/contracts`,
    );
    expect(projects.status).toBe(401);
    const docs = await fetch(`${stack.baseUrl}/hub/docs`);
    expect(docs.status).toBe(200);
    expect(docs.headers.get('content-type')).toMatch(/text\/html/);
  });

  test('when a state-changing request lacks the CSRF header or comes from another origin, then it is refused (403 csrf_check_failed)', async () => {
    const attempts: Record<string, string>[] = [
      { 'content-type': 'application/json' },
      { 'content-type': 'application/json', 'x-svc-csrf': '1', origin: 'https://evil.example' },
      { 'content-type': 'application/json', 'x-svc-csrf': '1', 'sec-fetch-site': 'cross-site' },
    ];
    for (const headers of attempts) {
      const response = await fetch(`${stack.baseUrl}/session`, {
        method: 'POST',
        headers,
        body: JSON.stringify(owner()),
      });
      expect(response.status).toBe(403);
      expect(((await response.json()) as { code: string }).code).toBe('csrf_check_failed');
      expect(response.headers.get('set-cookie')).toBeNull();
    }
  });
});

describe('signing in', () => {
  test('when the password is wrong, then the sign-in page says so and no session is made', async () => {
    const test = await openPage(browser);
    try {
      await test.page.goto(`${stack.baseUrl}/`);
      await test.page.waitForURL(/\/sign-in/);
      await test.page.getByLabel('Email').fill(owner().email);
      await test.page.getByLabel('Password').fill('not-the-password');
      await test.page.getByRole('button', { name: 'Sign in' }).click();
      await expect(test.page.getByRole('alert').textContent()).resolves.toContain(
        'The email or password is wrong.',
      );
      await test.screenshot('sign-in-wrong-password');
      expect(await test.page.context().cookies()).toEqual([]);
      // The refused POST /session is the one expected console error (the browser logs the 401).
      expectCleanPage(test, [/status of 401/]);
    } finally {
      await test.close();
    }
  });

  test('when the owner signs in, then the workspace shows with every page, another workspace can be opened, and sign out ends the session', async () => {
    const test = await openPage(browser);
    const { page } = test;
    try {
      await page.goto(`${stack.baseUrl}/`);
      await page.waitForURL(/\/sign-in/);
      await page.getByRole('heading', { name: 'Sign in to Control' }).waitFor();
      await test.screenshot('sign-in');
      await signIn(page, stack.baseUrl, owner());
      expect(new URL(page.url()).pathname).toBe(`/w/${stack.file.workspace.slug}`);
      await page.getByRole('heading', { level: 1, name: 'Development' }).waitFor();
      await page.getByRole('cell', { name: stack.file.project.code }).waitFor();
      await test.screenshot('workspace-overview');

      // The session is one HttpOnly, SameSite=Strict cookie; the page keeps nothing in its storage.
      const cookies = await page.context().cookies();
      expect(cookies.map((c) => ({ name: c.name, httpOnly: c.httpOnly, sameSite: c.sameSite }))).toEqual([
        { name: 'svc_session', httpOnly: true, sameSite: 'Strict' },
      ]);
      expect(cookies[0]!.value).not.toContain(stack.file.participant.token.split('.')[1]!);
      expect(await page.evaluate('[localStorage.length, sessionStorage.length]')).toEqual([0, 0]);

      // The owner is offered every page; each renders.
      const nav = page.getByRole('navigation', { name: 'Main' });
      const labels = await nav.getByRole('link').allTextContents();
      expect(labels).toEqual([
        'Overview',
        'Networks',
        'Agents',
        'Projects',
        'Audit log',
        'API keys',
        'Spawn policy',
      ]);
      for (const label of labels.slice(1)) {
        await nav.getByRole('link', { name: label }).click();
        await page.getByRole('heading', { level: 1, name: label }).waitFor();
        await test.screenshot(`page-${label.toLowerCase().replace(/\s+/g, '-')}`);
      }

      // The switcher lists both workspaces and opens the same page in the other one.
      await nav.getByRole('link', { name: 'API keys' }).click();
      await page.getByRole('heading', { level: 1, name: 'API keys' }).waitFor();
      await page.getByText('Workspace', { exact: true }).click();
      await page.getByRole('link', { name: new RegExp(second.name) }).click();
      await page.waitForURL(new RegExp(`/w/${second.slug}/settings/api-keys$`));
      await nav.getByRole('link', { name: 'Overview' }).click();
      await page.getByRole('heading', { level: 1, name: second.name }).waitFor();
      await test.screenshot('workspace-switched');

      await page.getByRole('button', { name: 'Sign out' }).click();
      await page.waitForURL(/\/sign-in/);
      expect(await page.context().cookies()).toEqual([]);
      await page.goto(`${stack.baseUrl}/w/${stack.file.workspace.slug}`);
      await page.waitForURL(/\/sign-in\?next=/);
      expectCleanPage(test);
    } finally {
      await test.close();
    }
  });

  test('when a viewer signs in, then pages their role may not use are not offered and say so when opened', async () => {
    const test = await openPage(browser);
    const { page } = test;
    try {
      await signIn(page, stack.baseUrl, viewer);
      const nav = page.getByRole('navigation', { name: 'Main' });
      expect(await nav.getByRole('link').allTextContents()).toEqual([
        'Overview',
        'Networks',
        'Agents',
        'Projects',
        // Read only for a viewer: the page offers no change.
        'Spawn policy',
      ]);
      await page.goto(`${stack.baseUrl}/w/${stack.file.workspace.slug}/audit`);
      await page.getByText('This page is not available to your role (viewer)').waitFor();
      await test.screenshot('viewer-refused-page');
      expectCleanPage(test);
    } finally {
      await test.close();
    }
  });
});
