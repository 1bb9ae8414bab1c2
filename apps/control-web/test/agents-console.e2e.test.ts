import { randomBytes, randomInt } from 'node:crypto';
import { eventually } from '@svc/testing';
import type { Browser, Page } from 'playwright-core';
import { launchBrowser, signedInPage } from './support/browser';
import type { TestPage } from './support/browser';
import { hubData, ownerCredentials, startBrowserStack } from './support/stack';
import type { BrowserStack } from './support/stack';

/**
 * Agents and the live console, in a real browser against a real development stack: the owner turns the
 * spawn policy on in Settings, spawns an agent from the Agents page (hub → relay → `svc start`), opens its
 * console (health and chat straight to the console router with console tickets, a terminal over its
 * WebSocket), runs a command, resizes the terminal, closes it, stops the agent and evicts it.
 */
jest.setTimeout(240_000);

let stack: BrowserStack;
let browser: Browser;
let tab: TestPage;
const suffix = randomBytes(3).toString('hex');
const agentName = `web-${suffix}`;
let agentId = '';

beforeAll(async () => {
  stack = await startBrowserStack('webagents');
  browser = await launchBrowser();
  tab = await signedInPage(browser, stack.baseUrl, ownerCredentials(stack));
}, 240_000);

afterAll(async () => {
  await tab?.close();
  await browser?.close();
  await stack?.stop();
}, 120_000);

const page = (): Page => tab.page;
/** The running states (the hub counts online, idle and busy as running). */
const RUNNING = /^(online|idle|busy)$/;
const workspaceUrl = (rest: string) => `${stack.baseUrl}/w/${stack.file.workspace.slug}/${rest}`;

/** The visible text of the xterm.js screen (its DOM renderer's rows). */
const screenText = () => page().locator('[data-testid="terminal-screen"] .xterm-rows').innerText();

/** The console router's open WebSockets on the agent's route (its loopback status). */
async function openSockets(id: string): Promise<number> {
  const status = (await (await fetch(`${stack.file.console_router_url}/status`)).json()) as {
    routes: Array<{ agent_id: string; open_sockets: number }>;
  };
  return status.routes.find((r) => r.agent_id === id)?.open_sockets ?? 0;
}

describe('agents and the live console', () => {
  test('when the owner opens Agents, then the development agent is listed with its spawn-ready host, project and status', async () => {
    await page().goto(workspaceUrl('networks'));
    await page().getByRole('heading', { level: 1, name: 'Networks' }).waitFor();
    await page()
      .getByText(/spawn ready/i)
      .first()
      .waitFor();
    await tab.screenshot('agents-networks-spawn-ready');

    await page().goto(workspaceUrl('agents'));
    const row = page().locator(`tr[data-agent-name="${stack.file.agent.name}"]`);
    await row.waitFor();
    await expect(row.locator('.status-badge').innerText()).resolves.toMatch(RUNNING);
    await expect(row.innerText()).resolves.toMatch(/spawn ready/);
    await expect(row.innerText()).resolves.toContain(stack.file.project.code);
    await tab.screenshot('agents-list');
  });

  test('when the owner turns the spawn policy on in Settings, then the hub reports it on', async () => {
    await page().getByRole('link', { name: 'Spawn policy' }).click();
    await page().getByRole('heading', { level: 1, name: 'Spawn policy' }).waitFor();
    await expect(page().getByTestId('policy-state').innerText()).resolves.toMatch(/Spawning is off/);
    await page().getByLabel('Allow spawning agents').check();
    await page().getByLabel('local/echo').check();
    await page().getByLabel('Allowed capabilities').fill('console');
    await page().getByRole('button', { name: 'Save policy' }).click();
    await page().getByText('Saved: spawning is on.').waitFor();
    await page().getByTestId('policy-state').getByText('on', { exact: true }).waitFor();
    await tab.screenshot('spawn-policy-on');

    const policy = await hubData<{
      enabled: boolean;
      allowed_models: string[];
      allowed_capabilities: string[];
    }>(stack, 'GET', `/api/v1/workspaces/${stack.file.workspace.slug}/spawn-policy`);
    expect(policy).toMatchObject({
      enabled: true,
      allowed_models: ['local/echo'],
      allowed_capabilities: ['console'],
    });
  });

  test('when the owner spawns an agent from the Agents page, then it starts on the host and runs', async () => {
    await page().getByRole('link', { name: 'Agents' }).click();
    await page().getByRole('button', { name: 'Spawn agent' }).click();
    await page().getByLabel('Capabilities').fill('console');
    await page().getByLabel('Name', { exact: true }).fill(agentName);
    await expect(
      page()
        .getByLabel(/Serve its console/)
        .isChecked(),
    ).resolves.toBe(true);
    await tab.screenshot('agents-spawn-form');
    await page().locator('form.spawn-form').getByRole('button', { name: 'Spawn agent' }).click();
    const state = page().getByTestId('spawn-state');
    await state.getByText(/: started/).waitFor({ timeout: 150_000 });
    await expect(state.innerText()).resolves.toContain(agentName);

    const row = page().locator(`tr[data-agent-name="${agentName}"]`);
    await row.locator('.status-badge', { hasText: RUNNING }).waitFor({ timeout: 30_000 });
    agentId = (await row.locator('code').innerText()).trim();
    expect(agentId).toMatch(/\S/);
    await tab.screenshot('agents-spawned-online');
  });

  test('when its console is opened, then health shows its id and uptime and the chat answers', async () => {
    await page().getByRole('link', { name: agentName }).click();
    await page().getByRole('heading', { level: 1, name: agentName }).waitFor();
    await expect(page().getByTestId('health-agent-id').innerText({ timeout: 30_000 })).resolves.toBe(agentId);
    await expect(page().getByTestId('health-uptime').innerText()).resolves.toMatch(/^\d+ (s|min|h|d)/);

    const question = `hello from the page ${suffix}`;
    await page().getByLabel('Message').fill(question);
    await page().getByRole('button', { name: 'Send' }).click();
    const reply = page().locator('.chat-agent .chat-text', { hasText: `You asked: "${question}"` });
    await reply.waitFor({ timeout: 30_000 });
    await expect(reply.innerText()).resolves.toContain(`I am ${agentName} (${agentId})`);
    await tab.screenshot('agent-console-health-chat');
  });

  test('when a command is typed in the terminal, then its output is on the screen; a resize reaches the pty; closing closes the socket', async () => {
    await page().getByRole('button', { name: 'Open terminal' }).click();
    await page()
      .getByTestId('terminal-state')
      .getByText(/^Connected/)
      .waitFor({ timeout: 30_000 });
    await eventually(async () => (await openSockets(agentId)) === 1, 10_000, 'the router holds the terminal');

    const a = randomInt(1000, 9999);
    const b = randomInt(1000, 9999);
    await page().locator('[data-testid="terminal-screen"]').click();
    await page().keyboard.type(`echo console-$((${a}+${b}))-ok\n`);
    // The sum is only on the screen if the shell ran the command (the typed line shows the expression).
    await eventually(async () => (await screenText()).includes(`console-${a + b}-ok`), 15_000, 'echo output');
    await tab.screenshot('agent-terminal-echo');

    const before = await page().getByTestId('terminal-state').innerText();
    await page().getByLabel('Size').selectOption('large');
    await eventually(
      async () => (await page().getByTestId('terminal-state').innerText()) !== before,
      10_000,
      'the terminal refits',
    );
    const [cols, rows] = (await page().getByTestId('terminal-state').innerText())
      .match(/(\d+)×(\d+)/)!
      .slice(1)
      .map(Number);
    await page().keyboard.type('clear; stty size\n');
    await eventually(async () => (await screenText()).includes(`${rows} ${cols}`), 15_000, 'stty size');
    await tab.screenshot('agent-terminal-resized');

    await page().getByRole('button', { name: 'Close terminal' }).click();
    await page().getByRole('button', { name: 'Open terminal' }).waitFor();
    await eventually(async () => (await openSockets(agentId)) === 0, 10_000, 'the socket is closed');
  });

  test('when the owner stops and then evicts the agent with confirmation, then it is evicted', async () => {
    await page()
      .getByRole('button', { name: `Stop ${agentName}` })
      .click();
    await page().locator('.page-head .status-badge', { hasText: 'offline' }).waitFor({ timeout: 15_000 });
    await tab.screenshot('agent-stopped');

    await page()
      .getByRole('button', { name: `Evict ${agentName}` })
      .click();
    const dialog = page().getByRole('dialog', { name: `Evict ${agentName}?` });
    await dialog.waitFor();
    await expect(dialog.innerText()).resolves.toMatch(/Nothing is deleted/);
    await tab.screenshot('agent-evict-confirm');
    await dialog.getByRole('button', { name: 'Evict agent' }).click();
    await page().locator('.page-head .status-badge', { hasText: 'evicted' }).waitFor({ timeout: 15_000 });
    await expect(
      page()
        .getByRole('button', { name: `Evict ${agentName}` })
        .count(),
    ).resolves.toBe(0);
    await tab.screenshot('agent-evicted');

    await page().getByRole('link', { name: 'Agents', exact: true }).first().click();
    const row = page().locator(`tr[data-agent-name="${agentName}"]`);
    await row.locator('.status-badge', { hasText: 'evicted' }).waitFor();
  });

  test('then the page broke no rule of its policy and threw nothing', () => {
    expect(tab.cspViolations).toEqual([]);
    expect(tab.pageErrors).toEqual([]);
  });
});
