import { randomBytes } from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import { axeViolations, horizontalOverflow } from './support/axe';
import { expectCleanPage, launchBrowser, openPage, signIn } from './support/browser';
import type { TestPage } from './support/browser';
import { invoke } from './support/seed';
import { hubData, ownerCredentials, startBrowserStack } from './support/stack';
import type { BrowserStack } from './support/stack';

/**
 * An operator's actions in a real browser against a real development stack, at a desktop and a phone size:
 * projects created, renamed, given a team, archived and brought back (two named alike told apart by code);
 * a cancelled invocation retried from its page, the two linked both ways and the canceller named; the search
 * box finding invocations, agents and projects by id or name. Every new dialog passes axe; no page scrolls
 * sideways.
 */
jest.setTimeout(240_000);

const DESKTOP = { width: 1440, height: 900 };
const PHONE = { width: 390, height: 844 };

let stack: BrowserStack;
let browser: Browser;
const suffix = randomBytes(3).toString('hex').toUpperCase();

beforeAll(async () => {
  stack = await startBrowserStack('webact');
  browser = await launchBrowser();
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
}, 120_000);

const workspaceUrl = (rest: string) => `${stack.baseUrl}/w/${stack.file.workspace.slug}/${rest}`;
const projectUrl = (rest: string) => workspaceUrl(`projects/${stack.file.project.id}/${rest}`);

/** A signed-in owner's page at `viewport`, open to injected checks (axe). */
async function ownerPage(viewport: { width: number; height: number }): Promise<TestPage> {
  const tab = await openPage(browser, { viewport, bypassCSP: true });
  await signIn(tab.page, stack.baseUrl, ownerCredentials(stack));
  return tab;
}

/** The open dialog passes axe and the page does not scroll sideways. */
async function expectDialogAccessible(page: Page, name: string): Promise<void> {
  const { serious, passed } = await axeViolations(page, 'dialog[open]');
  expect(passed).toBeGreaterThan(3);
  expect({ dialog: name, violations: serious }).toEqual({ dialog: name, violations: [] });
  expect({ dialog: name, overflow: await horizontalOverflow(page) }).toEqual({ dialog: name, overflow: 0 });
}

describe.each([
  ['desktop', DESKTOP],
  ['phone', PHONE],
] as const)('at %s size', (size, viewport) => {
  let tab: TestPage;
  let page: Page;
  const code = `DEV-${size === 'desktop' ? 'D' : 'P'}${suffix}`;

  beforeAll(async () => {
    tab = await ownerPage(viewport);
    page = tab.page;
  }, 120_000);

  afterAll(async () => {
    await tab?.close();
  });

  test('when the owner creates, renames, gives a team to, archives and unarchives a project, then the list follows each step and projects of one name are told apart', async () => {
    const team = await hubData<{ id: string; name: string }>(
      stack,
      'POST',
      `/api/v1/workspaces/${stack.file.workspace.slug}/teams`,
      { name: `Builders ${size} ${suffix}` },
    );
    // Another project of the same name, made elsewhere.
    await hubData(stack, 'POST', `/api/v1/workspaces/${stack.file.workspace.slug}/projects`, {
      code: `${code}-X`,
      name: `Development ${suffix}`,
    });
    await page.goto(workspaceUrl('projects'));
    await page.getByRole('heading', { level: 1, name: 'Projects' }).waitFor();
    await page.getByRole('button', { name: 'New project' }).click();
    const create = page.getByRole('dialog', { name: 'New project' });
    await create.waitFor();
    await page.getByLabel('Name', { exact: true }).fill(`Development ${suffix}`);
    await page.getByLabel('Code', { exact: true }).fill('has space');
    await create.getByRole('button', { name: 'Create project' }).click();
    await create.getByText(/letters, digits, hyphens or underscores/).waitFor();
    await expectDialogAccessible(page, `new project (${size})`);
    await tab.screenshot(`actions-${size}-01-new-project`);
    await page.getByLabel('Code', { exact: true }).fill(code);
    await create.getByRole('button', { name: 'Create project' }).click();
    await create.waitFor({ state: 'hidden' });

    const row = page.getByTestId(`project-${code}`);
    await row.waitFor();
    // Two projects named alike: each shows its code beside the name.
    expect(await row.textContent()).toContain(`(${code})`);
    expect(await page.getByTestId(`project-${code}-X`).textContent()).toContain(`(${code}-X)`);

    await row.getByRole('button', { name: /^Rename/ }).click();
    const rename = page.getByRole('dialog', { name: 'Rename project' });
    await rename.waitFor();
    await expectDialogAccessible(page, `rename (${size})`);
    await page.getByLabel('New name').fill(`Development staging ${suffix}`);
    await rename.getByRole('button', { name: 'Rename' }).click();
    await rename.waitFor({ state: 'hidden' });
    await row.getByRole('link', { name: `Development staging ${suffix}`, exact: true }).waitFor();

    await row.getByRole('button', { name: /^Teams of/ }).click();
    const teams = page.getByRole('dialog', { name: /^Teams of/ });
    await teams.waitFor();
    await teams.getByText(/No team is assigned/).waitFor();
    await expectDialogAccessible(page, `teams (${size})`);
    await page.getByLabel('Assign a team').selectOption(team.id);
    await teams.getByRole('button', { name: 'Assign team' }).click();
    await teams.waitFor({ state: 'hidden' });
    await row.getByRole('button', { name: /^Teams of/ }).click();
    await teams.getByRole('list', { name: 'Assigned teams' }).getByText(team.name).waitFor();
    await tab.screenshot(`actions-${size}-02-teams`);
    await teams.getByRole('button', { name: 'Cancel' }).click();
    await teams.waitFor({ state: 'hidden' });

    await row.getByRole('button', { name: /^Archive/ }).click();
    const archive = page.getByRole('dialog', { name: 'Archive project' });
    await archive.waitFor();
    await expectDialogAccessible(page, `archive (${size})`);
    await archive.getByRole('button', { name: 'Archive project' }).click();
    await archive.waitFor({ state: 'hidden' });
    await row.waitFor({ state: 'detached' });
    await page.getByLabel('Show archived projects').check();
    await row.getByText('archived', { exact: true }).waitFor();
    expect(await horizontalOverflow(page)).toBe(0);
    await tab.screenshot(`actions-${size}-03-archived`);
    await row.getByRole('button', { name: /^Unarchive/ }).click();
    await row.getByRole('button', { name: /^Archive/ }).waitFor();
    expectCleanPage(tab);
  });

  test('when a cancelled invocation is retried from its page, then the new one opens, says what it retries, and the old one links to it; the canceller is named', async () => {
    const intent = `Weekly report to retry ${size} ${suffix}`;
    const id = await invoke(stack, intent);
    await page.goto(projectUrl(`invocations/${id}`));
    await page.getByTestId('invocation-state').filter({ hasText: 'received' }).waitFor();
    await page.getByRole('button', { name: 'Cancel invocation' }).click();
    const cancel = page.getByRole('dialog', { name: 'Cancel invocation' });
    await cancel.getByRole('button', { name: 'Cancel invocation' }).click();
    await page.getByTestId('invocation-state').filter({ hasText: 'cancelled' }).waitFor();
    // The canceller by name, the id on hover only.
    const cancelled = page.locator('dt:text-is("Cancelled") + dd');
    await cancelled.locator('.named').waitFor();
    expect(await cancelled.locator('.named').getAttribute('title')).toMatch(/^prt_/);
    expect(await cancelled.textContent()).not.toMatch(/prt_/);

    await page.getByRole('button', { name: 'Retry', exact: true }).click();
    const retry = page.getByRole('dialog', { name: 'Retry invocation' });
    await retry.waitFor();
    await expectDialogAccessible(page, `retry (${size})`);
    await tab.screenshot(`actions-${size}-04-retry-dialog`);
    await retry.getByRole('button', { name: 'Retry', exact: true }).click();
    await page.waitForURL((url) => url.pathname.includes('/invocations/') && !url.pathname.endsWith(id));
    await page.getByTestId('invocation-state').filter({ hasText: 'received' }).waitFor();
    await page.getByText(intent).waitFor();
    const back = page.getByTestId('retry-of');
    await back.waitFor();
    const newId = page.url().split('/').pop()!;
    expect(await horizontalOverflow(page)).toBe(0);
    await tab.screenshot(`actions-${size}-05-retry`);
    await back.click();
    await page.waitForURL((url) => url.pathname.endsWith(id));
    await page.getByTestId('retried-as').getByRole('link').first().waitFor();
    expect(await page.getByTestId('retried-as').textContent()).toContain(newId);
    expect(await page.getByRole('button', { name: 'Retry', exact: true }).count()).toBe(1);

    // The list marks the retry, and a row opens whatever its intent.
    await page.goto(projectUrl('invocations'));
    await page.getByLabel('Id or words of the intent').fill(newId);
    const rows = page.getByRole('row').filter({ hasText: newId });
    await rows.getByText('retry', { exact: true }).waitFor();
    expect(await rows.getByRole('link').count()).toBeGreaterThan(0);
    expectCleanPage(tab);
  });

  test('when the operator searches from the header, then invocations, agents and projects are found by id or name', async () => {
    const word = `needle${size}${suffix}`.toLowerCase();
    const id = await invoke(stack, `Summary of the ${word} incident`);
    await page.goto(workspaceUrl(''));
    const box = page.getByRole('searchbox', { name: 'Search by id or name' });
    await box.fill(word);
    await box.press('Enter');
    await page.getByRole('heading', { level: 1, name: 'Search' }).waitFor();
    await page
      .getByTestId('search-invocations')
      .getByRole('link', { name: new RegExp(word) })
      .waitFor();
    await tab.screenshot(`actions-${size}-06-search`);
    expect(await horizontalOverflow(page)).toBe(0);

    await box.fill(id);
    await box.press('Enter');
    await page.getByTestId('search-invocations').getByRole('link').first().click();
    await page.waitForURL((url) => url.pathname.endsWith(id));

    await page.getByRole('searchbox', { name: 'Search by id or name' }).fill(stack.file.agent.name);
    await page.getByRole('searchbox', { name: 'Search by id or name' }).press('Enter');
    await page.getByTestId('search-agents').getByRole('link', { name: stack.file.agent.name }).waitFor();

    await page.getByRole('searchbox', { name: 'Search by id or name' }).fill(stack.file.project.code);
    await page.getByRole('searchbox', { name: 'Search by id or name' }).press('Enter');
    await page.getByTestId('search-projects').getByText(stack.file.project.code).waitFor();
    const { serious } = await axeViolations(page);
    expect(serious).toEqual([]);
    expectCleanPage(tab);
  });
});

test('the Overview names its projects, with the id on hover and the workspace id to copy', async () => {
  const tab = await ownerPage(DESKTOP);
  try {
    await tab.page.goto(workspaceUrl(''));
    const link = tab.page
      .getByRole('link', { name: /./ })
      .and(tab.page.locator(`[title="${stack.file.project.id}"]`));
    await link.first().waitFor();
    await tab.page.getByRole('button', { name: 'Copy workspace id' }).waitFor();
    expect(await tab.page.locator('main').textContent()).not.toContain(stack.file.workspace.id);
    expectCleanPage(tab);
  } finally {
    await tab.close();
  }
});
