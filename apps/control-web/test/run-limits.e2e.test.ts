import type { Browser, Page } from 'playwright-core';
import { launchBrowser, signedInPage } from './support/browser';
import type { TestPage } from './support/browser';
import { ownerCredentials, startBrowserStack } from './support/stack';
import type { BrowserStack } from './support/stack';

/**
 * A project's run limits in a real browser against a real development stack: the owner sets them in the form,
 * the Workflow API stores them, a value the API refuses is explained on the page, and clearing one saves "no
 * limit".
 */
jest.setTimeout(240_000);

let stack: BrowserStack;
let browser: Browser;
let t: TestPage;
let page: Page;
let limitsPage: string;

beforeAll(async () => {
  stack = await startBrowserStack('weblimits');
  browser = await launchBrowser();
  t = await signedInPage(browser, stack.baseUrl, ownerCredentials(stack));
  page = t.page;
  limitsPage = `${stack.baseUrl}/w/${stack.file.workspace.slug}/projects/${stack.file.project.id}/run-limits`;
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
}, 120_000);

async function storedLimits() {
  const res = await fetch(
    `${stack.file.workflow_url}/api/v1/projects/${stack.file.project.id}/workflow/run-limits`,
    { headers: { 'x-api-key': stack.file.api_keys.workflow_all } },
  );
  expect(res.status).toBe(200);
  return ((await res.json()) as { data: Record<string, unknown> }).data;
}

describe('run limits', () => {
  test('when the owner saves limits in the form, then the Workflow API holds them; a refused value is explained; a blank one clears it', async () => {
    await page.goto(limitsPage);
    await page.getByRole('heading', { level: 1, name: 'Run limits' }).waitFor();
    await page.getByTestId('runs-in-progress').waitFor();
    await page.getByLabel('Most runs at once in this project').fill('3');
    await page.getByLabel('Most runs at once in the workspace').fill('8');
    await page.getByRole('button', { name: 'Save limits' }).click();
    await page.getByRole('status').filter({ hasText: 'project 3 at once, workspace 8 at once' }).waitFor();
    expect(await storedLimits()).toMatchObject({
      project_max_runs_in_progress: 3,
      workspace_max_runs_in_progress: 8,
    });
    await t.screenshot('run-limits-01-saved');

    // The browser's own number check is bypassed: the Workflow API's answer is what the page shows.
    await page.getByLabel('Most runs at once in this project').evaluate((el) => el.removeAttribute('max'));
    await page.getByLabel('Most runs at once in this project').fill('20000');
    await page.getByRole('button', { name: 'Save limits' }).click();
    await page.getByText('The limits were not saved').waitFor();
    expect(await storedLimits()).toMatchObject({ project_max_runs_in_progress: 3 });

    await page.getByLabel('Most runs at once in this project').fill('');
    await page.getByRole('button', { name: 'Save limits' }).click();
    await page.getByRole('status').filter({ hasText: 'project no limit, workspace 8 at once' }).waitFor();
    expect(await storedLimits()).toMatchObject({
      project_max_runs_in_progress: null,
      workspace_max_runs_in_progress: 8,
    });
  });
});
