import { randomBytes } from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import { expectCleanPage, launchBrowser, signedInPage } from './support/browser';
import type { TestPage } from './support/browser';
import { eventually } from '@svc/testing';
import { invoke } from './support/seed';
import { addViewer, ownerCredentials, startBrowserStack, startDeliveryReceiver } from './support/stack';
import type { BrowserStack } from './support/stack';

/**
 * Projects → workflow in a real browser against a real development stack: an artifact schema and a contract
 * made through the forms (inline errors first), an intent tried (resolve's explanation, preflight's
 * blockers), an invocation launched from the page whose stage timeline reaches `completed` live (the
 * reference agent owns `report` stages), its artifact and envelope, a delivery to a loopback receiver
 * replayed from the page, another invocation cancelled, the list filtered and a contract retired. The page
 * calls the Workflow API with the participant's session only.
 */
jest.setTimeout(240_000);

let stack: BrowserStack;
let browser: Browser;
let t: TestPage;
let page: Page;
let receiver: Awaited<ReturnType<typeof startDeliveryReceiver>>;
const suffix = randomBytes(3).toString('hex');
const schemaName = `status-note-${suffix}`;
const phrase = `status note ${suffix}`;
const waitPhrase = `translation ${suffix}`;
let projectBase: string;
let completedId: string;

beforeAll(async () => {
  stack = await startBrowserStack('webflow');
  browser = await launchBrowser();
  receiver = await startDeliveryReceiver(stack, ['invocation.completed', 'invocation.cancelled']);
  t = await signedInPage(browser, stack.baseUrl, ownerCredentials(stack));
  page = t.page;
  projectBase = `${stack.baseUrl}/w/${stack.file.workspace.slug}/projects/${stack.file.project.id}`;
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await receiver?.close();
  await stack?.stop();
}, 120_000);

const stateBadge = () => page.getByTestId('invocation-state');

describe('projects and their workflow', () => {
  test('when the owner opens Projects, then the development project is listed with its workflow links', async () => {
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Projects' }).click();
    await page.getByRole('heading', { level: 1, name: 'Projects' }).waitFor();
    const row = page.getByRole('row').filter({ hasText: stack.file.project.code });
    await row.waitFor();
    await t.screenshot('workflow-01-projects');
    await row.getByRole('link').first().click();
    await page.getByRole('heading', { level: 1, name: 'Contracts' }).waitFor();
    expect(page.url()).toBe(`${projectBase}/contracts`);
    // The project's own address opens its contracts.
    await page.goto(projectBase);
    await page.waitForURL(`${projectBase}/contracts`);
    await page.getByRole('heading', { level: 1, name: 'Contracts' }).waitFor();
  });

  test('when a schema name breaks the rule, then the form says so inline; fixed, the version registers and an old one is deprecated after confirmation', async () => {
    await page
      .getByRole('navigation', { name: 'Project workflow' })
      .getByRole('link', { name: 'Artifact schemas' })
      .click();
    await page.getByRole('heading', { name: 'Register a version' }).waitFor();
    await page.getByLabel('Name', { exact: true }).fill('Status Note!');
    const nameError = page.locator('#schema-name-error');
    await nameError.waitFor();
    expect(await nameError.textContent()).toMatch(
      /Name must use only lowercase letters, digits, dots, underscores and hyphens/,
    );
    expect(await nameError.textContent()).not.toMatch(/[\^$[\]]/);
    expect(await page.getByLabel('Name', { exact: true }).getAttribute('aria-invalid')).toBe('true');
    await t.screenshot('workflow-02-schema-inline-error');

    for (const version of ['0.9.0', '1.0.0']) {
      await page.getByLabel('Name', { exact: true }).fill(schemaName);
      await page.getByLabel('Version', { exact: true }).fill(version);
      await page.getByLabel('JSON Schema (draft 2020-12)').fill(
        JSON.stringify({
          type: 'object',
          required: ['headline', 'notes'],
          additionalProperties: false,
          properties: {
            headline: { type: 'string', minLength: 1, maxLength: 120 },
            notes: { type: 'array', minItems: 1, maxItems: 5, items: { type: 'string', minLength: 1 } },
          },
        }),
      );
      await page.getByRole('button', { name: 'Register version' }).click();
      await page
        .getByRole('status')
        .filter({ hasText: `Registered ${schemaName}@${version}.` })
        .waitFor();
    }
    expect(await nameError.count()).toBe(0);
    const old = page.getByRole('row').filter({ hasText: '0.9.0' }).filter({ hasText: schemaName });
    await old.getByRole('button', { name: /^Deprecate/ }).click();
    const dialog = page.getByRole('dialog', { name: 'Deprecate schema version' });
    await dialog.waitFor();
    expect(await dialog.textContent()).toMatch(/final/);
    await dialog.getByRole('button', { name: 'Deprecate version' }).click();
    await old.getByText(/^deprecated/).waitFor();
    const current = page.getByRole('row').filter({ hasText: '1.0.0' }).filter({ hasText: schemaName });
    expect(await current.getByText('current').count()).toBe(1);
    await current.getByRole('button', { name: /^View/ }).click();
    await page.getByLabel('JSON Schema', { exact: true }).getByText('"headline"').waitFor();
    await t.screenshot('workflow-03-schemas');
  });

  test('when a contract form holds a bad template version, then the error shows inline before anything is sent; fixed, the contract is created', async () => {
    await page.goto(`${projectBase}/contracts`);
    await page.getByRole('link', { name: 'New contract' }).click();
    await page.getByRole('heading', { level: 1, name: 'New contract' }).waitFor();
    await page.getByLabel('Name', { exact: true }).fill(`Status note ${suffix}`);
    await page.getByLabel('Intent phrases').fill(phrase);
    await page.getByLabel('Template key').fill(`status-note-${suffix}`);
    await page.getByLabel('Template version').fill('1 0');
    await page.getByLabel('Artifact schema name').fill(schemaName);
    const versionError = page.locator('#field-templateVersion-error');
    await versionError.waitFor();
    expect(await versionError.textContent()).toMatch(/Template version must use only letters, digits/);
    // The schema version is still empty: saving names it too, and nothing reaches the server.
    await page.getByRole('button', { name: 'Create contract' }).click();
    await page.locator('#field-schemaVersion-error').waitFor();
    expect(
      await page
        .getByRole('alert')
        .filter({ hasText: /fields need attention/ })
        .count(),
    ).toBe(1);
    await t.screenshot('workflow-04-contract-inline-errors');

    await page.getByLabel('Template version').fill('1.0.0');
    await page.getByLabel('Artifact schema version').fill('1.0.0');
    await page.getByLabel('Stage 1 key').fill('gather');
    await page.getByLabel('Stage 1 title').fill('Gather the notes');
    await page.getByLabel('Stage 1 capabilities').fill('report');
    await page.getByRole('button', { name: 'Add stage' }).click();
    await page.getByLabel('Stage 2 key').fill('gather');
    await page
      .locator('#field-stage-1-key-error')
      .getByText(/used by an earlier stage/)
      .waitFor();
    await page.getByLabel('Stage 2 key').fill('write');
    await page.getByLabel('Stage 2 title').fill('Write the status note');
    await page.getByLabel('Stage 2 capabilities').fill('report');
    expect(await versionError.count()).toBe(0);
    await page.getByRole('button', { name: 'Create contract' }).click();
    await page.waitForURL(/\/contracts\/[a-z]+_[A-Za-z0-9]+$/);
    await page.getByRole('heading', { level: 1, name: `Contract: Status note ${suffix}` }).waitFor();
    await page.getByRole('status').filter({ hasText: 'Created.' }).waitFor();
    await t.screenshot('workflow-05-contract-created');

    // A second contract whose stage needs a capability no agent has: its runs wait for an owner.
    await page.goto(`${projectBase}/contracts/new`);
    await page.getByLabel('Name', { exact: true }).fill(`Translation ${suffix}`);
    await page.getByLabel('Intent phrases').fill(waitPhrase);
    await page.getByLabel('Template key').fill(`translation-${suffix}`);
    await page.getByLabel('Artifact schema name').fill(schemaName);
    await page.getByLabel('Artifact schema version').fill('1.0.0');
    await page.getByLabel('Stage 1 key').fill('translate');
    await page.getByLabel('Stage 1 title').fill('Translate');
    await page.getByLabel('Stage 1 capabilities').fill('translate');
    await page.getByRole('button', { name: 'Create contract' }).click();
    await page.waitForURL(/\/contracts\/[a-z]+_[A-Za-z0-9]+$/);

    await page.goto(`${projectBase}/contracts`);
    const rows = page.getByRole('row');
    await rows.filter({ hasText: `Status note ${suffix}` }).waitFor();
    await rows.filter({ hasText: `Translation ${suffix}` }).waitFor();
    await t.screenshot('workflow-06-contracts');
  });

  test('when an intent is tried, then resolve explains the match and preflight lists the blockers with their recommended actions', async () => {
    await page
      .getByRole('navigation', { name: 'Project workflow' })
      .getByRole('link', { name: 'Try an intent' })
      .click();
    await page
      .getByLabel('Intent', { exact: true })
      .fill(`Please write the ${waitPhrase} of the release notes`);
    await page.getByRole('button', { name: 'Resolve and preflight' }).click();
    await page.getByText(`Matched Translation ${suffix}`).waitFor();
    const blockers = page.locator('.blocker');
    await blockers.first().waitFor();
    const text = (await blockers.allTextContents()).join('\n');
    expect(text).toMatch(/no_stage_owner/);
    expect(text).toMatch(/Recommended action:/);
    expect(await page.locator('.outcome-accepted_waiting_for_owner').count()).toBe(1);
    await t.screenshot('workflow-07-intent-blockers');

    await page.getByLabel('Intent', { exact: true }).fill(`The ${phrase} for this week`);
    await page.getByRole('button', { name: 'Resolve and preflight' }).click();
    await page.getByText(`Matched Status note ${suffix}`).waitFor();
    const explanation = await page.locator('.explanation').textContent();
    expect(explanation).toMatch(/it was the only matching contract/);
    expect(explanation).toMatch(new RegExp(`intent contains ${phrase}`));
    await page.getByText('No blockers.').waitFor();
    await t.screenshot('workflow-08-intent-ready');
  });

  test('when it is invoked and launched from the page, then the stage timeline follows the run live to completed with its artifact and envelope', async () => {
    await page.getByRole('button', { name: 'Invoke and launch' }).click();
    await page.waitForURL(/\/invocations\/inv_[A-Za-z0-9]+$/);
    completedId = page.url().split('/').pop()!;
    await stateBadge().waitFor();
    // Read the page as it updates itself: the states it shows, and the drawing before the run ends.
    const seen: string[] = [];
    let shot = false;
    const started = Date.now();
    for (;;) {
      const state = (await stateBadge().textContent()) ?? '';
      if (seen[seen.length - 1] !== state) seen.push(state);
      const stages = await page
        .locator('svg.timeline-svg g.tl-stage')
        .evaluateAll((gs) =>
          gs.map((g) => `${g.getAttribute('data-stage')}:${g.getAttribute('data-state')}`).join(' '),
        );
      if (!shot && stages && state !== 'completed') {
        shot = true;
        await t.screenshot('workflow-09-timeline-running');
      }
      if (state === 'completed') break;
      if (Date.now() - started > 120_000) throw new Error(`the run did not complete: ${seen.join(' → ')}`);
      await page.waitForTimeout(100);
    }
    // The page moved through the run's states without a reload.
    expect(seen[0]).not.toBe('completed');
    expect(seen[seen.length - 1]).toBe('completed');
    const svg = page.locator('svg.timeline-svg');
    await eventually(
      async () => (await svg.getAttribute('data-state')) === 'completed',
      5_000,
      'the drawing',
    );
    const stages = svg.locator('g.tl-stage');
    expect(await stages.count()).toBe(2);
    expect(
      await stages.evaluateAll((gs) =>
        gs.map((g) => `${g.getAttribute('data-stage')}:${g.getAttribute('data-state')}`),
      ),
    ).toEqual(['gather:completed', 'write:completed']);
    const drawn = (await svg.textContent()) ?? '';
    expect(drawn).toMatch(/owner dev-console-agent/);
    expect(drawn).toMatch(/handoff/);
    expect(drawn).toMatch(/done /);

    await page.getByRole('heading', { name: 'Payload' }).waitFor();
    const payload = JSON.parse((await page.getByLabel('Artifact payload').textContent()) ?? '') as {
      headline: string;
      notes: string[];
    };
    expect(typeof payload.headline).toBe('string');
    expect(payload.notes.length).toBeGreaterThan(0);
    const envelope = JSON.parse(
      (await page.getByLabel('Artifact envelope without its payload').textContent()) ?? '',
    ) as Record<string, unknown>;
    expect(envelope).toMatchObject({
      envelope_version: '1',
      invocation_id: completedId,
      schema: { name: schemaName, version: '1.0.0' },
    });
    expect(envelope.payload_sha256).toMatch(/^[0-9a-f]{64}$/);
    await t.screenshot('workflow-10-timeline-completed');
  });

  test('when the completed delivery is replayed from the page, then the receiver gets it again and the attempt is listed', async () => {
    await eventually(
      () => receiver.received.some((r) => r.event === 'invocation.completed'),
      30_000,
      'the first delivery',
    );
    const deliveries = page.locator('table.deliveries');
    const row = deliveries.getByRole('row').filter({ hasText: 'invocation.completed' });
    await row.getByText('succeeded').waitFor({ timeout: 15_000 });
    await row.getByRole('button', { name: /Show attempts/ }).click();
    const attempts = page.locator('.delivery-attempts');
    await attempts.getByRole('cell', { name: 'scheduled' }).waitFor();
    const before = receiver.received.filter((r) => r.event === 'invocation.completed').length;
    await attempts.getByRole('button', { name: 'Replay delivery' }).click();
    await eventually(
      () => receiver.received.filter((r) => r.event === 'invocation.completed').length > before,
      30_000,
      'the replayed delivery',
    );
    await attempts.getByRole('cell', { name: 'manual' }).waitFor({ timeout: 15_000 });
    const ids = new Set(receiver.received.filter((r) => r.event === 'invocation.completed').map((r) => r.id));
    expect(ids.size).toBe(1); // the same delivery, attempted again
    expect(await row.locator('td').nth(2).textContent()).toBe('2');
    await t.screenshot('workflow-11-delivery-replayed');
  });

  test('when an invocation waiting for an owner is cancelled after confirmation, then it ends cancelled and its cancellation is delivered', async () => {
    await page.goto(`${projectBase}/intent`);
    await page.getByLabel('Intent', { exact: true }).fill(`Please do the ${waitPhrase}`);
    await page.getByRole('button', { name: 'Resolve and preflight' }).click();
    await page.getByText(`Matched Translation ${suffix}`).waitFor();
    await page.getByRole('button', { name: 'Invoke and launch' }).click();
    await page.waitForURL(/\/invocations\/inv_[A-Za-z0-9]+$/);
    await page.locator('svg.timeline-svg g.tl-stage').waitFor();
    await page.locator('.tl-waiting').waitFor();
    const drawn = (await page.locator('svg.timeline-svg').textContent()) ?? '';
    expect(drawn).toMatch(/waiting for an owner/);
    expect(drawn).toMatch(/current stage/);
    await page.getByRole('heading', { name: 'What holds it' }).waitFor();
    await t.screenshot('workflow-12-timeline-waiting');

    await page.getByRole('button', { name: 'Cancel invocation' }).click();
    const dialog = page.getByRole('dialog', { name: 'Cancel invocation' });
    await dialog.getByLabel('Reason (optional)').fill('not needed any more');
    await dialog.getByRole('button', { name: 'Cancel invocation' }).click();
    await eventually(async () => (await stateBadge().textContent()) === 'cancelled', 15_000, 'cancelled');
    expect(await page.getByText('not needed any more').count()).toBe(1);
    const svg = page.locator('svg.timeline-svg');
    await eventually(
      async () => (await svg.getAttribute('data-state')) === 'cancelled',
      5_000,
      'the drawing',
    );
    // The stage never got an owner, so the run ended before reaching it.
    expect(await svg.locator('g.tl-stage').getAttribute('data-state')).toBe('skipped');
    expect(await page.locator('.tl-current').count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Cancel invocation' }).count()).toBe(0);
    await eventually(
      () => receiver.received.some((r) => r.event === 'invocation.cancelled'),
      30_000,
      'the cancellation',
    );
    await t.screenshot('workflow-13-cancelled');
  });

  test('when the invocations are filtered by state, then only the matching ones are listed', async () => {
    await page
      .getByRole('navigation', { name: 'Project workflow' })
      .getByRole('link', { name: 'Invocations' })
      .click();
    await page.getByRole('heading', { level: 1, name: 'Invocations' }).waitFor();
    const body = page.locator('tbody');
    await body.getByRole('row').nth(1).waitFor();
    await page.getByLabel('State').selectOption('completed');
    await eventually(async () => (await body.getByRole('row').count()) === 1, 10_000, 'the completed filter');
    expect(await body.textContent()).toContain(completedId);
    await page.getByLabel('State').selectOption('cancelled');
    await eventually(
      async () =>
        !((await body.textContent()) ?? '').includes(completedId) &&
        (await body.getByRole('row').count()) === 1,
      10_000,
      'the cancelled filter',
    );
    await t.screenshot('workflow-14-invocations-filtered');
  });

  test('when an invocation was only received, then the page launches it and it runs to completed', async () => {
    const id = await invoke(stack, `The ${phrase} sent by the API`);
    await page.goto(`${projectBase}/invocations/${id}`);
    await page.getByText('Not launched yet: launch it to start its stages.').waitFor();
    expect(await stateBadge().textContent()).toBe('received');
    await page.getByRole('button', { name: 'Launch', exact: true }).click();
    await eventually(
      async () => (await stateBadge().textContent()) === 'completed',
      90_000,
      'the run launched from the page',
    );
    await page.locator('svg.timeline-svg[data-state="completed"]').waitFor();
    await t.screenshot('workflow-14b-launched-from-received');
  });

  test('when a template asks for approval, then the run waits until the owner approves it in the page, and then completes', async () => {
    await page.goto(`${projectBase}/contracts/new`);
    await page.getByLabel('Name', { exact: true }).fill(`Approved note ${suffix}`);
    await page.getByLabel('Intent phrases').fill(`approved note ${suffix}`);
    await page.getByLabel('Template key').fill(`approved-note-${suffix}`);
    await page.getByLabel('Artifact schema name').fill(schemaName);
    await page.getByLabel('Artifact schema version').fill('1.0.0');
    await page.getByLabel('A human (owner or admin) approves each run before it starts').check();
    await page.getByLabel('Stage 1 key').fill('write');
    await page.getByLabel('Stage 1 title').fill('Write the approved note');
    await page.getByLabel('Stage 1 capabilities').fill('report');
    await page.getByRole('button', { name: 'Create contract' }).click();
    await page.waitForURL(/\/contracts\/[a-z]+_[A-Za-z0-9]+$/);

    await page.goto(`${projectBase}/intent`);
    await page.getByLabel('Intent', { exact: true }).fill(`The approved note ${suffix}, please`);
    await page.getByRole('button', { name: 'Resolve and preflight' }).click();
    await page.getByText(`Matched Approved note ${suffix}`).waitFor();
    await page.getByRole('button', { name: 'Invoke and launch' }).click();
    await page.waitForURL(/\/invocations\/inv_[A-Za-z0-9]+$/);
    const panel = page.getByRole('region', { name: 'Approval needed' });
    await panel.waitFor({ timeout: 15_000 });
    expect(await stateBadge().textContent()).toBe('awaiting approval');
    expect(await page.getByText('attention: approval required').count()).toBeGreaterThan(0);
    await t.screenshot('workflow-15-awaiting-approval');

    await panel.getByLabel('Comment (optional)').fill('looks right');
    await panel.getByRole('button', { name: 'Approve run' }).click();
    await eventually(
      async () => (await stateBadge().textContent()) === 'completed',
      60_000,
      'the approved run',
    );
    await page.locator('svg.timeline-svg[data-state="completed"]').waitFor();
    await page.getByText(/^Approved .* — “looks right”$/).waitFor();
    expect(await panel.count()).toBe(0);
    await t.screenshot('workflow-16-approved-completed');
  });

  test('when a used template version is changed, then the server refuses it and the page shows its problem', async () => {
    await page.goto(`${projectBase}/contracts`);
    await page.getByRole('link', { name: `Status note ${suffix}` }).click();
    await page.getByLabel('Stage 2 title').fill('Write the status note twice');
    await page.getByRole('button', { name: 'Save changes' }).click();
    const problem = page.getByRole('alert').filter({ hasText: 'The Workflow API refused the contract' });
    await problem.waitFor();
    expect(await problem.textContent()).toMatch(/template_version_immutable/);
    await t.screenshot('workflow-17-contract-server-error');
  });

  test('when a viewer opens the same pages, then they read everything and are offered no change', async () => {
    const viewer = {
      email: `viewer-${suffix}@dev.svc.local`,
      password: `viewer-${randomBytes(12).toString('hex')}`,
    };
    await addViewer(stack, viewer);
    const v = await signedInPage(browser, stack.baseUrl, viewer);
    try {
      await v.page.goto(`${projectBase}/contracts`);
      await v.page.getByRole('link', { name: `Status note ${suffix}` }).waitFor();
      expect(await v.page.getByRole('link', { name: 'New contract' }).count()).toBe(0);
      expect(await v.page.getByRole('button', { name: /^Retire/ }).count()).toBe(0);
      await v.page.goto(`${projectBase}/invocations/${completedId}`);
      await v.page.locator('svg.timeline-svg[data-state="completed"]').waitFor();
      await v.page
        .locator('table.deliveries')
        .getByRole('button', { name: /Show attempts/ })
        .first()
        .click();
      await v.page.locator('.delivery-attempts table').waitFor();
      expect(await v.page.getByRole('button', { name: 'Replay delivery' }).count()).toBe(0);
      await v.page.goto(`${projectBase}/intent`);
      await v.page.getByLabel('Intent', { exact: true }).fill(`The ${phrase} again`);
      await v.page.getByRole('button', { name: 'Resolve and preflight' }).click();
      await v.page.getByText(`Matched Status note ${suffix}`).waitFor();
      expect(await v.page.getByRole('button', { name: 'Invoke and launch' }).count()).toBe(0);
      await v.screenshot('workflow-18-viewer-intent');
      expect(v.pageErrors).toEqual([]);
      expect(v.consoleErrors).toEqual([]);
    } finally {
      await v.close();
    }
  });

  test('when a contract is edited, then the change is saved as a new revision', async () => {
    await page.goto(`${projectBase}/contracts`);
    await page.getByRole('link', { name: `Translation ${suffix}` }).click();
    await page.getByLabel('Priority').fill('x');
    await page.locator('#field-priority-error').getByText('must be a whole number').waitFor();
    await page.getByLabel('Priority').fill('5');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByRole('status').filter({ hasText: 'Saved: revision 2.' }).waitFor();
    expect(await page.getByLabel('Priority').inputValue()).toBe('5');
  });

  test('when a contract is retired after confirmation, then it leaves the list and resolve', async () => {
    await page.goto(`${projectBase}/contracts`);
    const row = page.getByRole('row').filter({ hasText: `Translation ${suffix}` });
    await row.getByRole('button', { name: /^Retire/ }).click();
    const dialog = page.getByRole('dialog', { name: 'Retire contract' });
    await dialog.getByRole('button', { name: 'Retire contract' }).click();
    await eventually(async () => (await row.count()) === 0, 10_000, 'the retired contract to leave the list');
    await page.getByLabel('Show retired contracts').check();
    await row.getByText('retired').waitFor();
    await t.screenshot('workflow-19-contract-retired');

    await page.goto(`${projectBase}/intent`);
    await page.getByLabel('Intent', { exact: true }).fill(`Please do the ${waitPhrase}`);
    await page.getByRole('button', { name: 'Resolve and preflight' }).click();
    await page.getByText('No contract matched this intent.').waitFor();
    expect(await page.locator('.blocker').allTextContents()).toEqual(
      expect.arrayContaining([expect.stringMatching(/no_contract_matched/)]),
    );
    // The advice is for a person: no request headers or fields, no backticks.
    const advice = (await page.locator('.blocker .recommended').allTextContents()).join('\n');
    expect(advice).toMatch(/Create a contract whose intent phrases appear in this intent/);
    expect(advice).not.toMatch(/Idempotency-Key|workflow_contract_id|`/);
    // The one refusal the suite provokes on purpose (a used template version changed) is logged by the browser.
    expectCleanPage(t, [/status of 409 \(Conflict\)/]);
    expect(t.consoleErrors.length).toBeLessThanOrEqual(1);
  });
});
