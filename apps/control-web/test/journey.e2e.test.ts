import { randomBytes, randomInt } from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, signedInPage } from './support/browser';
import type { TestPage } from './support/browser';
import { eventually } from '@svc/testing';
import { startBrowserStack, startDeliveryReceiver, ownerCredentials } from './support/stack';
import type { BrowserStack } from './support/stack';

/**
 * A participant's whole first session in one browser tab against a real development stack: sign in, create
 * an automation key and copy it, see the host spawn ready, turn spawning on and spawn an agent, run a command
 * in its terminal, run an invocation to `completed` (its contract created with the copied key), replay its
 * delivery, and stop and evict the agent.
 */
jest.setTimeout(300_000);

let stack: BrowserStack;
let browser: Browser;
let tab: TestPage;
let receiver: Awaited<ReturnType<typeof startDeliveryReceiver>>;
const suffix = randomBytes(3).toString('hex');
const keyName = `journey-${suffix}`;
const agentName = `journey-${suffix}`;
const schemaName = `journey-note-${suffix}`;
const phrase = `journey note ${suffix}`;
let copiedKey = '';

const page = (): Page => tab.page;
const workspaceUrl = (rest: string) => `${stack.baseUrl}/w/${stack.file.workspace.slug}/${rest}`;

beforeAll(async () => {
  stack = await startBrowserStack('webjourney');
  browser = await launchBrowser();
  receiver = await startDeliveryReceiver(stack, ['invocation.completed']);
}, 300_000);

afterAll(async () => {
  await tab?.close();
  await browser?.close();
  await receiver?.close();
  await stack?.stop();
}, 120_000);

describe('a participant’s journey', () => {
  test('signs in and creates an automation key, shown once and copied', async () => {
    tab = await signedInPage(browser, stack.baseUrl, ownerCredentials(stack));
    await page().context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: stack.baseUrl });
    await page().getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'API keys' }).click();
    await page().getByRole('heading', { level: 1, name: 'API keys' }).waitFor();
    await page().getByRole('button', { name: 'New API key' }).click();
    await page().getByLabel('Name', { exact: true }).fill(keyName);
    await page().getByRole('radio', { name: 'From a preset' }).check();
    await page()
      .getByRole('radio', { name: /Automation \/ CI/ })
      .check();
    await page().getByRole('button', { name: 'Create key' }).click();
    const panel = page().getByRole('region', { name: `Key “${keyName}” created` });
    await panel.waitFor();
    await tab.screenshot('journey-01-key-created');
    await panel.getByRole('button', { name: 'Copy key' }).click();
    await panel.getByText('Copied').waitFor();
    copiedKey = String(await page().evaluate('navigator.clipboard.readText()'));
    await page().evaluate('navigator.clipboard.writeText("")');
    // Checked without printing it.
    expect(/^svc_\S+_\S+$/.test(copiedKey)).toBe(true);
    await panel.getByRole('button', { name: 'I have stored the key' }).click();
  });

  test("sees the stack's host spawn ready, turns spawning on and spawns an agent that comes online", async () => {
    await page().getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Networks' }).click();
    await page().getByText('Spawn ready', { exact: true }).first().waitFor({ timeout: 60_000 });
    await tab.screenshot('journey-02-networks');

    await page().goto(workspaceUrl('settings/spawn-policy'));
    await page().getByRole('heading', { level: 1, name: 'Spawn policy' }).waitFor();
    await page().getByLabel('Allow spawning agents').check();
    await page().getByLabel('local/echo').check();
    await page().getByLabel('Allowed capabilities').fill('console');
    await page().getByRole('button', { name: 'Save policy' }).click();
    await page().getByText('Saved: spawning is on.').waitFor();

    await page().getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Agents' }).click();
    await page().getByRole('button', { name: 'Spawn agent' }).click();
    await page().getByLabel('Capabilities').fill('console');
    await page().getByLabel('Name', { exact: true }).fill(agentName);
    await page().locator('form.spawn-form').getByRole('button', { name: 'Spawn agent' }).click();
    await page()
      .getByTestId('spawn-state')
      .getByText(/: started/)
      .waitFor({ timeout: 150_000 });
    const row = page().locator(`tr[data-agent-name="${agentName}"]`);
    await row.locator('.status-badge', { hasText: /^(online|idle|busy)$/ }).waitFor({ timeout: 30_000 });
    await tab.screenshot('journey-03-agent-spawned');
  });

  test("runs a command in the agent's terminal and reads its output", async () => {
    await page().getByRole('link', { name: agentName }).click();
    await page().getByRole('heading', { level: 1, name: agentName }).waitFor();
    await page().getByRole('button', { name: 'Open terminal' }).click();
    await page()
      .getByTestId('terminal-state')
      .getByText(/^Connected/)
      .waitFor({ timeout: 30_000 });
    const a = randomInt(1000, 9999);
    const b = randomInt(1000, 9999);
    await page().locator('[data-testid="terminal-screen"]').click();
    await page().keyboard.type(`echo journey-$((${a}+${b}))-ok\n`);
    const screen = page().locator('[data-testid="terminal-screen"] .xterm-rows');
    await eventually(async () => (await screen.innerText()).includes(`journey-${a + b}-ok`), 15_000, 'echo');
    await tab.screenshot('journey-04-terminal');
    await page().getByRole('button', { name: 'Close terminal' }).click();
  });

  test('runs an invocation to completed: schema registered in the page, contract made with the copied key', async () => {
    const base = workspaceUrl(`projects/${stack.file.project.id}`);
    await page().goto(`${base}/schemas`);
    await page().getByLabel('Name', { exact: true }).fill(schemaName);
    await page().getByLabel('Version', { exact: true }).fill('1.0.0');
    await page().getByRole('button', { name: 'Register version' }).click();
    await page().getByText(`Registered ${schemaName}@1.0.0.`).waitFor();

    // Automation holds `workflow-contracts:write`: the copied key creates the contract.
    const created = await fetch(
      `${stack.file.workflow_url}/api/v1/projects/${stack.file.project.id}/workflow/contracts`,
      {
        method: 'POST',
        headers: { 'x-api-key': copiedKey, 'content-type': 'application/json' },
        body: JSON.stringify({
          name: `Journey ${suffix}`,
          classifier: { intentContains: [phrase] },
          template: {
            key: `journey-${suffix}`,
            version: '1.0.0',
            required_capabilities: [],
            artifact_schema: { name: schemaName, version: '1.0.0' },
            guardrails: { human_approval_required: false },
            stages: [{ key: 'note', title: 'Write the note', required_capabilities: ['report'] }],
          },
        }),
      },
    );
    expect(created.status).toBe(201);

    await page().goto(`${base}/intent`);
    await page().getByLabel('Intent', { exact: true }).fill(`The ${phrase} for today`);
    await page().getByRole('button', { name: 'Resolve and preflight' }).click();
    await page().getByText(`Matched Journey ${suffix}`).waitFor();
    await page().getByRole('button', { name: 'Invoke and launch' }).click();
    await page().waitForURL(/\/invocations\/inv_[A-Za-z0-9]+$/);
    await eventually(
      async () => (await page().getByTestId('invocation-state').textContent()) === 'completed',
      120_000,
      'the run to complete',
    );
    await page().locator('svg.timeline-svg[data-state="completed"]').waitFor();
    await page().getByRole('heading', { name: 'Payload' }).waitFor();
    await tab.screenshot('journey-05-invocation-completed');
  });

  test('replays the delivery of the completed run from the page', async () => {
    await eventually(
      () => receiver.received.some((r) => r.event === 'invocation.completed'),
      30_000,
      'the first delivery',
    );
    const row = page()
      .locator('table.deliveries')
      .getByRole('row')
      .filter({ hasText: 'invocation.completed' });
    await row.getByText('succeeded').waitFor({ timeout: 15_000 });
    await row.getByRole('button', { name: /Show attempts/ }).click();
    await page().getByRole('button', { name: 'Replay delivery' }).click();
    await eventually(() => receiver.received.length >= 2, 30_000, 'the replayed delivery');
    await page()
      .locator('.delivery-attempts')
      .getByRole('cell', { name: 'manual' })
      .waitFor({ timeout: 15_000 });
    await tab.screenshot('journey-06-delivery-replayed');
  });

  test('stops and evicts the spawned agent with confirmation', async () => {
    await page().goto(workspaceUrl('agents'));
    await page().getByRole('link', { name: agentName }).click();
    await page().getByRole('heading', { level: 1, name: agentName }).waitFor();
    await page()
      .getByRole('button', { name: `Stop ${agentName}` })
      .click();
    await page().locator('.page-head .status-badge', { hasText: 'offline' }).waitFor({ timeout: 15_000 });
    await page()
      .getByRole('button', { name: `Evict ${agentName}` })
      .click();
    await page()
      .getByRole('dialog', { name: `Evict ${agentName}?` })
      .getByRole('button', { name: 'Evict agent' })
      .click();
    await page().locator('.page-head .status-badge', { hasText: 'evicted' }).waitFor({ timeout: 15_000 });
    await tab.screenshot('journey-07-agent-evicted');
  });

  test('and the page broke no rule of its policy and threw nothing', () => {
    expect(tab.cspViolations).toEqual([]);
    expect(tab.pageErrors).toEqual([]);
    expect(tab.consoleErrors).toEqual([]);
  });
});
