import { readFileSync } from 'node:fs';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, openPage, signIn } from './support/browser';
import type { TestPage } from './support/browser';
import { seedWorkflow } from './support/seed';
import type { SeededWorkflow } from './support/seed';
import { ownerCredentials, startBrowserStack } from './support/stack';
import type { BrowserStack } from './support/stack';

/**
 * Every page at a phone (390x844), a tablet (768x1024) and a desktop (1440x900), in a real browser against a
 * real development stack with a finished run and a waiting one: no page scrolls sideways
 * (`scrollWidth <= innerWidth`), axe-core finds no serious or critical WCAG 2.1 A/AA violation, and a
 * screenshot of each is kept (`test-results/screenshots/responsive-<size>-<page>.png`). On the phone and the
 * tablet the navigation hides behind a menu button that opens and closes it; tables turn into labelled
 * cards; dialogs, the terminal and the chat fit, and a chat message wraps by words.
 *
 * axe-core is injected as an inline script, so this suite's context bypasses the page's CSP (as the
 * accessibility suite does); the other suites keep it on.
 */
jest.setTimeout(300_000);

const SIZES = [
  { name: 'phone', width: 390, height: 844 },
  { name: 'tablet', width: 768, height: 1024 },
  { name: 'desktop', width: 1440, height: 900 },
] as const;
const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
const WCAG_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'];

let stack: BrowserStack;
let browser: Browser;
let seeded: SeededWorkflow;

beforeAll(async () => {
  stack = await startBrowserStack('webfit');
  browser = await launchBrowser();
  seeded = await seedWorkflow(stack);
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
}, 120_000);

interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: Array<{ target: unknown[] }>;
}

/** axe-core's serious and critical violations on the page as it is, one line per element. */
async function seriousViolations(page: Page): Promise<string[]> {
  if (!(await page.evaluate<boolean>("'axe' in window"))) await page.addScriptTag({ content: AXE_SOURCE });
  const violations = await page.evaluate<AxeViolation[]>(
    `axe.run(document, { runOnly: { type: 'tag', values: ${JSON.stringify(WCAG_TAGS)} } }).then((r) => r.violations)`,
  );
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .flatMap((v) => v.nodes.map((n) => `${v.id} at ${JSON.stringify(n.target)}: ${v.help}`));
}

/** How far the page is wider than the window, and the widest elements past its right edge when it is. */
async function overflow(page: Page): Promise<{ excess: number; culprits: string[] }> {
  return page.evaluate(`(() => {
    const excess = document.scrollingElement.scrollWidth - window.innerWidth;
    const culprits = [];
    if (excess > 0)
      for (const el of document.querySelectorAll('body *')) {
        const box = el.getBoundingClientRect();
        if (box.right > window.innerWidth + 1)
          culprits.push(el.tagName.toLowerCase() + '.' + String(el.className).slice(0, 40) + ' → ' + Math.round(box.right));
      }
    return { excess, culprits: culprits.slice(0, 6) };
  })()`);
}

/** The page fits its window, passes axe, and is photographed as `responsive-<size>-<name>`. */
async function expectFits(tab: TestPage, size: string, name: string): Promise<void> {
  await tab.screenshot(`responsive-${size}-${name}`);
  const { excess, culprits } = await overflow(tab.page);
  expect({
    page: `${size} ${name}`,
    excess: Math.max(0, excess),
    culprits: excess > 0 ? culprits : [],
  }).toEqual({ page: `${size} ${name}`, excess: 0, culprits: [] });
  expect({ page: `${size} ${name}`, violations: await seriousViolations(tab.page) }).toEqual({
    page: `${size} ${name}`,
    violations: [],
  });
}

describe.each(SIZES)('at $name size ($width x $height)', (size) => {
  let tab: TestPage;
  const page = (): Page => tab.page;
  const url = (rest: string) => `${stack.baseUrl}/w/${stack.file.workspace.slug}${rest ? `/${rest}` : ''}`;
  const collapsed = size.width < 900;

  beforeAll(async () => {
    tab = await openPage(browser, { viewport: { width: size.width, height: size.height }, bypassCSP: true });
    await signIn(page(), stack.baseUrl, ownerCredentials(stack));
  });
  afterAll(async () => {
    await tab?.close();
  });

  async function open(rest: string): Promise<void> {
    await page().goto(url(rest));
    await page().getByRole('heading', { level: 1 }).first().waitFor();
    await page().waitForLoadState('networkidle');
  }

  test('when the navigation is needed, then it is there: behind a menu button on small screens, beside the page on a desktop', async () => {
    await open('');
    const nav = page().getByRole('navigation', { name: 'Main' });
    const menu = page().getByRole('button', { name: 'Menu' });
    if (!collapsed) {
      expect(await menu.isVisible()).toBe(false);
      expect(await nav.getByRole('link', { name: 'Agents' }).isVisible()).toBe(true);
      return;
    }
    expect(await nav.getByRole('link', { name: 'Agents' }).isVisible()).toBe(false);
    expect(await menu.getAttribute('aria-expanded')).toBe('false');
    await menu.click();
    expect(await menu.getAttribute('aria-expanded')).toBe('true');
    await nav.getByRole('link', { name: 'Agents' }).waitFor();
    await expectFits(tab, size.name, 'menu-open');
    await nav.getByRole('link', { name: 'Agents' }).click();
    await page().getByRole('heading', { level: 1, name: 'Agents' }).waitFor();
    // Opening a page closes the menu.
    expect(await menu.getAttribute('aria-expanded')).toBe('false');
    expect(await nav.getByRole('link', { name: 'Agents' }).isVisible()).toBe(false);
  });

  const project = () => `projects/${stack.file.project.id}`;
  const pages: Array<[string, () => string]> = [
    ['overview', () => ''],
    ['networks', () => 'networks'],
    ['agents', () => 'agents'],
    ['projects', () => 'projects'],
    ['audit', () => 'audit'],
    ['api-keys', () => 'settings/api-keys'],
    ['spawn-policy', () => 'settings/spawn-policy'],
    ['contracts', () => `${project()}/contracts`],
    ['contract-new', () => `${project()}/contracts/new`],
    ['intent', () => `${project()}/intent`],
    ['schemas', () => `${project()}/schemas`],
    ['invocations', () => `${project()}/invocations`],
    ['invocation-completed', () => `${project()}/invocations/${seeded.completedId}`],
    ['invocation-received', () => `${project()}/invocations/${seeded.receivedId}`],
    ['deliveries', () => `${project()}/deliveries`],
    ['search', () => `search?q=${encodeURIComponent(stack.file.project.code)}`],
  ];
  test.each(pages)('when %s is opened, then it fits the screen and passes axe', async (name, rest) => {
    await open(rest());
    await expectFits(tab, size.name, name);
  });

  test('when a table is shown on a phone, then its rows are cards whose cells name their column', async () => {
    await open(`${project()}/invocations`);
    const cell = page().locator('tbody td').first();
    await cell.waitFor();
    expect(await cell.getAttribute('data-label')).toBe('Intent');
    const display = await page().evaluate<string>(
      "getComputedStyle(document.querySelector('tbody td')).display",
    );
    expect(display).toBe(size.width <= 640 ? 'block' : 'table-cell');
  });

  test('when a contract form shows its errors and an intent is tried, then both still fit', async () => {
    await open(`${project()}/contracts/new`);
    await page().getByRole('button', { name: 'Create contract' }).click();
    await page().locator('.field-error').first().waitFor();
    await expectFits(tab, size.name, 'contract-errors');
    await open(`${project()}/intent`);
    await page().getByLabel('Intent', { exact: true }).fill(`The ${seeded.phrase} again`);
    await page().getByRole('button', { name: 'Resolve and preflight' }).click();
    await page().getByText(`Matched ${seeded.contractName}`).waitFor();
    await expectFits(tab, size.name, 'intent-result');
  });

  test('when a confirmation opens, then the dialog fits the screen and passes axe', async () => {
    await open(`${project()}/invocations/${seeded.receivedId}`);
    await page().getByRole('button', { name: 'Cancel invocation' }).click();
    const dialog = page().getByRole('dialog', { name: 'Cancel invocation' });
    await dialog.waitFor();
    const box = (await dialog.boundingBox())!;
    expect(box.x).toBeGreaterThanOrEqual(0);
    expect(box.x + box.width).toBeLessThanOrEqual(size.width);
    await expectFits(tab, size.name, 'cancel-dialog');
    await page().keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
  });

  test("when an agent's console is used, then the chat wraps by words and the terminal fits", async () => {
    await open(`agents/${stack.file.agent.id}`);
    await page().getByTestId('health-agent-id').waitFor({ timeout: 30_000 });
    const question = 'Could you summarise what changed in the deployment pipeline yesterday afternoon?';
    await page().getByLabel('Message').fill(question);
    await page().getByRole('button', { name: 'Send' }).click();
    const mine = page().locator('.chat-text', { hasText: question }).first();
    await mine.waitFor();
    // A syllable-per-line column is a few dozen pixels wide; a readable one holds several words a line.
    const box = (await mine.boundingBox())!;
    expect(box.width).toBeGreaterThan(200);
    const lineHeight = await page().evaluate<number>(
      "parseFloat(getComputedStyle(document.querySelector('.chat-text')).lineHeight)",
    );
    const height = box.height;
    expect(height / lineHeight).toBeLessThanOrEqual(size.width <= 640 ? 4 : 3);
    await page().getByRole('button', { name: 'Open terminal' }).click();
    await page()
      .getByTestId('terminal-state')
      .getByText(/^Connected/)
      .waitFor({ timeout: 30_000 });
    const screen = (await page().getByTestId('terminal-screen').boundingBox())!;
    expect(screen.x + screen.width).toBeLessThanOrEqual(size.width);
    await expectFits(tab, size.name, 'agent-console');
  });
});
