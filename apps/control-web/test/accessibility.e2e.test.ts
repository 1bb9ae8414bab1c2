import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, openPage, signIn } from './support/browser';
import type { TestPage } from './support/browser';
import { seedWorkflow } from './support/seed';
import type { SeededWorkflow } from './support/seed';
import { addViewer, startBrowserStack, ownerCredentials } from './support/stack';
import type { BrowserStack } from './support/stack';

/**
 * Accessibility of every page, in a real browser against a real development stack, on a laptop screen
 * (1366x768): axe-core finds no serious or critical WCAG 2.1 A/AA violation on any page or key state (a
 * confirmation open, a form showing its errors, an agent's console), no page scrolls sideways, and the app
 * works from the keyboard (sign-in order, the skip link, the navigation, a confirmation that keeps focus and
 * closes with Escape, a visible focus outline).
 *
 * axe-core's source is injected with `addScriptTag({ content })`, an inline script the app's strict
 * Content-Security-Policy refuses (`script-src 'self'`). So this suite's browser context alone is created with
 * `bypassCSP: true`; the other suites keep the policy on and check that nothing breaks it.
 */
jest.setTimeout(180_000);

const LAPTOP = { width: 1366, height: 768 };
const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
const WCAG_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'];

let stack: BrowserStack;
let browser: Browser;
let tab: TestPage;

beforeAll(async () => {
  stack = await startBrowserStack('weba11y');
  browser = await launchBrowser();
  tab = await openPage(browser, { viewport: LAPTOP, bypassCSP: true });
}, 240_000);

afterAll(async () => {
  await tab?.close();
  await browser?.close();
  await stack?.stop();
}, 120_000);

const page = (): Page => tab.page;
const owner = () => ownerCredentials(stack);
const workspaceUrl = (rest: string) =>
  `${stack.baseUrl}/w/${stack.file.workspace.slug}${rest ? `/${rest}` : ''}`;

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  helpUrl: string;
  nodes: Array<{ target: unknown[]; failureSummary?: string }>;
}

/**
 * Runs axe-core on the page as it is and returns its serious and critical violations, one line per node (rule
 * id, target, help text). Lesser ones are printed, not failed.
 */
async function seriousViolations(): Promise<string[]> {
  // The page scripts below are strings: this file is compiled without the DOM's types.
  if (!(await page().evaluate<boolean>("'axe' in window")))
    await page().addScriptTag({ content: AXE_SOURCE });
  const violations = await page().evaluate<{ violations: unknown; passed: number }>(
    `axe.run(document, { runOnly: { type: 'tag', values: ${JSON.stringify(WCAG_TAGS)} } })
      .then((results) => ({ violations: results.violations, passed: results.passes.length }))`,
  );
  // A run that checked nothing proves nothing: the page has text, links and landmarks to check.
  expect(violations.passed).toBeGreaterThan(5);
  const lesser = (violations.violations as AxeViolation[]).filter(
    (v) => v.impact !== 'serious' && v.impact !== 'critical',
  );
  if (lesser.length > 0) console.log(`lesser: ${lesser.map((v) => `${v.id} (${v.impact})`).join(', ')}`);
  return (violations.violations as AxeViolation[])
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .flatMap((v) =>
      v.nodes.map(
        (node) =>
          `${v.id} (${v.impact}) at ${JSON.stringify(node.target)}: ${v.help} — ${node.failureSummary ?? ''}`,
      ),
    );
}

/** The page's width fits the viewport: no horizontal scrollbar. */
async function horizontalOverflow(): Promise<number> {
  return page().evaluate<number>(
    '(document.scrollingElement || document.documentElement).scrollWidth - window.innerWidth',
  );
}

/** Checks the page as it is now: axe-core clean, no sideways scrolling; saves a screenshot. */
async function expectAccessible(name: string): Promise<void> {
  await tab.screenshot(`a11y-${name}`);
  const found = await seriousViolations();
  if (found.length > 0) console.log(`${name}:\n  ${found.join('\n  ')}`);
  expect({ page: name, violations: found }).toEqual({ page: name, violations: [] });
  expect({ page: name, overflow: Math.max(0, await horizontalOverflow()) }).toEqual({
    page: name,
    overflow: 0,
  });
}

/** The element that has focus, described by tag, id and text. */
function focused(): Promise<string> {
  return page().evaluate<string>(`(() => {
    const el = document.activeElement;
    if (!el) return 'none';
    const text = (el.textContent || '').trim().slice(0, 40);
    return (el.tagName.toLowerCase() + (el.id ? '#' + el.id : '') + ' ' + text).trim();
  })()`);
}

/** Focus is inside the open modal dialog. */
function focusInDialog(): Promise<boolean> {
  return page().evaluate<boolean>(
    "Boolean(document.querySelector('dialog[open]')?.contains(document.activeElement))",
  );
}

async function openAndWait(rest: string, heading: string | RegExp): Promise<void> {
  await page().goto(workspaceUrl(rest));
  await page().getByRole('heading', { level: 1, name: heading }).waitFor();
  // Let data that loads after the heading arrive (lists, live panels).
  await page().waitForLoadState('networkidle');
}

describe('the sign-in page', () => {
  test('when it is reached with the keyboard, then Tab goes through email, password and Sign in in order, with a visible focus outline', async () => {
    await page().goto(`${stack.baseUrl}/sign-in`);
    await page().getByRole('heading', { level: 1, name: 'Sign in to Control' }).waitFor();
    await expectAccessible('sign-in');

    await page().keyboard.press('Tab');
    await expect(focused()).resolves.toMatch(/^input#email/);
    const outline = await page().evaluate<{ matches: boolean; style: string; width: string }>(`(() => {
      const el = document.activeElement;
      const style = getComputedStyle(el);
      return { matches: el.matches(':focus-visible'), style: style.outlineStyle, width: style.outlineWidth };
    })()`);
    expect(outline.matches).toBe(true);
    expect(outline.style).not.toBe('none');
    expect(parseFloat(outline.width)).toBeGreaterThanOrEqual(2);
    await page().keyboard.press('Tab');
    await expect(focused()).resolves.toMatch(/^input#password/);
    await page().keyboard.press('Tab');
    await expect(focused()).resolves.toMatch(/^button.*Sign in/);
  });

  test('when a wrong password is sent, then the refusal is announced and the form stays accessible', async () => {
    await page().getByLabel('Email').fill(owner().email);
    await page().getByLabel('Password').fill('not-the-password');
    await page().getByRole('button', { name: 'Sign in' }).click();
    await page().getByRole('alert').waitFor();
    await expectAccessible('sign-in-refused');
  });
});

describe('the signed-in pages', () => {
  beforeAll(async () => {
    await signIn(page(), stack.baseUrl, owner());
  });

  test('when the skip link is used, then focus moves to the main content', async () => {
    await openAndWait('', /.+/);
    await page().locator('body').focus();
    await page().keyboard.press('Tab');
    await expect(focused()).resolves.toMatch(/^a Skip to content/);
    await page().keyboard.press('Enter');
    await expect(focused()).resolves.toMatch(/^main#main/);
  });

  test('when the navigation is used with the keyboard, then Tab reaches its links and Enter opens the page', async () => {
    await openAndWait('', /.+/);
    const nav = page().getByRole('navigation', { name: 'Main' });
    const link = nav.getByRole('link', { name: 'Audit log' });
    await nav.getByRole('link').first().focus();
    for (let i = 0; i < 12 && !/^a Audit log/.test(await focused()); i += 1) {
      await page().keyboard.press('Tab');
    }
    await expect(focused()).resolves.toMatch(/^a Audit log/);
    await page().keyboard.press('Enter');
    await page().getByRole('heading', { level: 1, name: 'Audit log' }).waitFor();
    await expect(link.getAttribute('aria-current')).resolves.toBe('page');
  });

  const pages: Array<[string, string, string | RegExp]> = [
    ['overview', '', /.+/],
    ['networks', 'networks', 'Networks'],
    ['agents', 'agents', 'Agents'],
    ['projects', 'projects', 'Projects'],
    ['audit', 'audit', 'Audit log'],
    ['api-keys', 'settings/api-keys', 'API keys'],
    ['spawn-policy', 'settings/spawn-policy', 'Spawn policy'],
  ];
  test.each(pages)(
    'when %s is opened, then it has no serious violation and fits the laptop screen',
    async (name, rest, heading) => {
      await openAndWait(rest, heading);
      await expectAccessible(name);
    },
  );

  test('when the project pages are opened, then each has no serious violation and fits the laptop screen', async () => {
    const project = stack.file.project.id;
    for (const [name, rest] of [
      ['contracts', `projects/${project}/contracts`],
      ['intent', `projects/${project}/intent`],
      ['schemas', `projects/${project}/schemas`],
      ['invocations', `projects/${project}/invocations`],
      ['deliveries', `projects/${project}/deliveries`],
    ] as const) {
      await page().goto(workspaceUrl(rest));
      await page().getByRole('heading', { level: 1 }).waitFor();
      await page().waitForLoadState('networkidle');
      await expectAccessible(name);
    }
  });

  test('when a new contract is submitted empty, then its errors are shown accessibly', async () => {
    await openAndWait(`projects/${stack.file.project.id}/contracts/new`, /.+/);
    await page().getByRole('button', { name: 'Create contract' }).click();
    await page().locator('.field-error').first().waitFor();
    await expectAccessible('contract-form-errors');
  });

  test("when an agent's console is opened, then it has no serious violation and fits the laptop screen", async () => {
    await page().goto(workspaceUrl(`agents/${stack.file.agent.id}`));
    await page().getByRole('heading', { level: 1, name: stack.file.agent.name }).waitFor();
    await page().getByTestId('health-agent-id').waitFor({ timeout: 30_000 });
    await expectAccessible('agent-console');
    await page().getByRole('button', { name: 'Open terminal' }).click();
    await page()
      .getByTestId('terminal-state')
      .getByText(/^Connected/)
      .waitFor({ timeout: 30_000 });
    await expectAccessible('agent-console-terminal');
  });

  test('when a confirmation is opened with the keyboard, then focus stays inside it, it passes axe, and Escape closes it', async () => {
    await openAndWait('agents', 'Agents');
    const evict = page()
      .locator(`tr[data-agent-name="${stack.file.agent.name}"]`)
      .getByRole('button', { name: /^Evict/ });
    await evict.focus();
    await page().keyboard.press('Enter');
    const dialog = page().getByRole('dialog', { name: `Evict ${stack.file.agent.name}?` });
    await dialog.waitFor();
    await expect(focused()).resolves.toMatch(/^button Cancel/);
    for (let i = 0; i < 6; i += 1) {
      await page().keyboard.press('Tab');
      await expect(focusInDialog()).resolves.toBe(true);
    }
    await page().keyboard.press('Shift+Tab');
    await expect(focusInDialog()).resolves.toBe(true);
    await expectAccessible('agents-evict-dialog');
    await page().keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
    await expect(focused()).resolves.toMatch(/^button Evict/);
  });
});

describe('the invocation pages, the deprecate confirmation and a viewer', () => {
  let seeded: SeededWorkflow;
  let earlierTab: TestPage;
  // A tab of its own, signed in as the owner (the suite's tab may be signed in already, or not when run alone).
  beforeAll(async () => {
    seeded = await seedWorkflow(stack);
    earlierTab = tab;
    tab = await openPage(browser, { viewport: LAPTOP, bypassCSP: true });
    await signIn(page(), stack.baseUrl, owner());
  }, 180_000);
  afterAll(async () => {
    await tab.close();
    tab = earlierTab;
  });

  test('when an invocation is opened (completed, and received), then its page has no serious violation', async () => {
    const project = `projects/${stack.file.project.id}`;
    await openAndWait(`${project}/invocations/${seeded.completedId}`, /.+/);
    await page().getByText('completed').first().waitFor();
    await expectAccessible('invocation-completed');
    await openAndWait(`${project}/invocations/${seeded.receivedId}`, /.+/);
    await expectAccessible('invocation-received');
  });

  test('when a schema version is about to be deprecated, then the confirmation passes axe and Escape closes it', async () => {
    await openAndWait(`projects/${stack.file.project.id}/schemas`, /.+/);
    const row = page().getByRole('row').filter({ hasText: seeded.schemaName }).first();
    await row.getByRole('button', { name: /^Deprecate/ }).click();
    const dialog = page().getByRole('dialog', { name: 'Deprecate schema version' });
    await dialog.waitFor();
    await expect(focusInDialog()).resolves.toBe(true);
    await expectAccessible('schemas-deprecate-dialog');
    await page().keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
  });

  test('when a viewer opens the pages, then each has no serious violation and fits the laptop screen', async () => {
    const viewer = {
      email: `viewer-a11y-${randomBytes(3).toString('hex')}@example.test`,
      password: `viewer-${randomBytes(12).toString('hex')}`,
    };
    await addViewer(stack, viewer);
    const ownerTab = tab;
    tab = await openPage(browser, { viewport: LAPTOP, bypassCSP: true });
    try {
      await signIn(page(), stack.baseUrl, viewer);
      const project = `projects/${stack.file.project.id}`;
      for (const [name, rest] of [
        ['viewer-overview', ''],
        ['viewer-networks', 'networks'],
        ['viewer-agents', 'agents'],
        ['viewer-projects', 'projects'],
        ['viewer-contracts', `${project}/contracts`],
        ['viewer-schemas', `${project}/schemas`],
        ['viewer-invocations', `${project}/invocations`],
        ['viewer-invocation', `${project}/invocations/${seeded.completedId}`],
        ['viewer-deliveries', `${project}/deliveries`],
      ] as const) {
        await openAndWait(rest, /.+/);
        await expectAccessible(name);
      }
    } finally {
      await tab.close();
      tab = ownerTab;
    }
  });
});
