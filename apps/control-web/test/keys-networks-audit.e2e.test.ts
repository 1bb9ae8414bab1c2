import { randomBytes } from 'node:crypto';
import type { Browser, Page } from 'playwright-core';
import { eventually } from '@svc/testing';
import { expectCleanPage, launchBrowser, openPage, signIn } from './support/browser';
import type { TestPage } from './support/browser';
import { addViewer, hubCall, hubData, ownerCredentials, startBrowserStack } from './support/stack';
import type { BrowserStack } from './support/stack';

jest.setTimeout(180_000);

let stack: BrowserStack;
let browser: Browser;
const suffix = randomBytes(3).toString('hex');
const viewer = {
  email: `viewer-${suffix}@dev.svc.local`,
  password: `viewer-${randomBytes(12).toString('hex')}`,
};
const keyName = `CI deploy ${suffix}`;
/** Set by the key test, read by the audit test (the events the key's life caused). */
let createdKeyId: string | undefined;

beforeAll(async () => {
  stack = await startBrowserStack('webkeys');
  browser = await launchBrowser();
  await addViewer(stack, viewer);
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
}, 120_000);

const owner = () => ownerCredentials(stack);
const workspacePath = (page = '') =>
  `${stack.baseUrl}/w/${stack.file.workspace.slug}${page ? `/${page}` : ''}`;

async function ownerPage(): Promise<TestPage> {
  const test = await openPage(browser);
  await signIn(test.page, stack.baseUrl, owner());
  return test;
}

/** The text of a cell of the key's row (by the cell's `data-label`). */
function keyCell(page: Page, label: string) {
  return page.locator(`tr[data-key-id="${createdKeyId}"] td[data-column="${label}"]`);
}

describe('Settings → API keys', () => {
  test('when the owner creates a key from a preset, then it is shown once, copies, shows its use, and once revoked is refused', async () => {
    const test = await ownerPage();
    const { page } = test;
    try {
      await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: stack.baseUrl });
      await page.goto(workspacePath('settings/api-keys'));
      await page.getByRole('heading', { level: 1, name: 'API keys' }).waitFor();
      // The development stack's own keys are listed (never their secrets).
      await page.getByRole('table', { name: 'API keys' }).waitFor();
      await test.screenshot('api-keys-list');

      await page.getByRole('button', { name: 'New API key' }).click();
      await page.getByLabel('Name', { exact: true }).fill(keyName);
      // Explicit scopes are grouped by the spec's families; destructive ones are flagged.
      await page.getByRole('radio', { name: 'Explicit scopes' }).check();
      await page.getByRole('checkbox', { name: 'admin:tunnels' }).check();
      await page.getByText('This key will hold destructive or privileged scopes (admin:tunnels)').waitFor();
      await test.screenshot('api-keys-explicit-scopes');
      await page.getByRole('radio', { name: 'From a preset' }).check();
      await page.getByRole('radio', { name: /Automation \/ CI/ }).check();
      await page.getByText('Grants:').getByText('workflows:run').waitFor();
      await page.getByLabel('Expires').selectOption('30');
      await test.screenshot('api-keys-create-form');
      await page.getByRole('button', { name: 'Create key' }).click();

      // Shown once: masked until asked for, with its prefix only.
      const panel = page.getByRole('region', { name: `Key “${keyName}” created` });
      await panel.waitFor();
      const keys = await hubData<{ id: string; name: string; prefix: string; preset: string | null }[]>(
        stack,
        'GET',
        `/api/v1/workspaces/${stack.file.workspace.slug}/api-keys`,
      );
      const record = keys.find((k) => k.name === keyName);
      expect(record?.preset).toBe('automation');
      createdKeyId = record!.id;
      await expect(panel.getByLabel('The new key, hidden').textContent()).resolves.toMatch(
        new RegExp(`^svc_${record!.prefix}_•+$`),
      );
      await test.screenshot('api-keys-created-masked');

      await panel.getByRole('button', { name: 'Copy key' }).click();
      await panel.getByText('Copied').waitFor();
      const copied = String(await page.evaluate('navigator.clipboard.readText()'));
      // Compared without printing: a failing assertion shows booleans, never the key.
      expect(copied.startsWith(`svc_${record!.prefix}_`) && copied.length > 30).toBe(true);
      await page.evaluate('navigator.clipboard.writeText("")');

      // Listed with its expiry (in 30 days) and no use yet.
      await expect(keyCell(page, 'expires').textContent()).resolves.toMatch(/in (29|30) days/);
      await expect(keyCell(page, 'last-used').textContent()).resolves.toBe('never');

      // Used once with the copied key, the list shows it used (the page reads the keys again every 15 s).
      const use = await hubCall(
        stack,
        'GET',
        `/api/v1/workspaces/${stack.file.workspace.slug}/projects`,
        undefined,
        {
          'x-api-key': copied,
        },
      );
      expect(use.status).toBe(200);
      const lastUsed = keyCell(page, 'last-used');
      await eventually(
        async () => /^\d+ (s|min) ago$/.test((await lastUsed.textContent()) ?? ''),
        25_000,
        'the key shown as used',
        { intervalMs: 250 },
      );
      await panel.getByRole('button', { name: 'I have stored the key' }).click();
      await expect(panel.count()).resolves.toBe(0);
      await test.screenshot('api-keys-used');

      // Revoke asks first; Cancel keeps the key.
      await page.getByRole('button', { name: `Revoke ${keyName}` }).click();
      const dialog = page.getByRole('dialog', { name: 'Revoke this key?' });
      await dialog.waitFor();
      await test.screenshot('api-keys-revoke-confirm');
      await dialog.getByRole('button', { name: 'Cancel' }).click();
      await expect(page.locator(`tr[data-key-id="${createdKeyId}"]`).count()).resolves.toBe(1);
      await page.getByRole('button', { name: `Revoke ${keyName}` }).click();
      await dialog.getByRole('button', { name: 'Revoke key' }).click();
      await page.locator(`tr[data-key-id="${createdKeyId}"]`).waitFor({ state: 'detached' });

      const refused = await hubCall(
        stack,
        'GET',
        `/api/v1/workspaces/${stack.file.workspace.slug}/projects`,
        undefined,
        {
          'x-api-key': copied,
        },
      );
      expect(refused.status).toBe(401);

      await page.getByRole('checkbox', { name: 'Show revoked keys' }).check();
      await page.locator(`tr[data-key-id="${createdKeyId}"]`).getByText('revoked', { exact: true }).waitFor();
      await expect(page.getByRole('button', { name: `Revoke ${keyName}` }).count()).resolves.toBe(0);
      await test.screenshot('api-keys-revoked');
      // The key never reached the page's storage.
      expect(await page.evaluate('[localStorage.length, sessionStorage.length]')).toEqual([0, 0]);
      expectCleanPage(test);
    } finally {
      await test.close();
    }
  });

  test('when a viewer signs in, then API keys are not offered and the hub refuses them the actions', async () => {
    const test = await openPage(browser);
    const { page } = test;
    try {
      await signIn(page, stack.baseUrl, viewer);
      const nav = page.getByRole('navigation', { name: 'Main' });
      expect(await nav.getByRole('link').allTextContents()).not.toContain('API keys');
      await page.goto(workspacePath('settings/api-keys'));
      await page.getByText('This page is not available to your role (viewer)').waitFor();
      await expect(page.getByRole('button', { name: 'New API key' }).count()).resolves.toBe(0);
      await expect(page.getByRole('button', { name: /^Revoke/ }).count()).resolves.toBe(0);
      await test.screenshot('api-keys-viewer');
      // Not offered, and not possible either: the hub refuses the viewer through the app's own forwarding.
      const created = await page.evaluate(async (slug) => {
        const response = await fetch(`/hub/api/v1/workspaces/${slug}/api-keys`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-svc-csrf': '1' },
          body: JSON.stringify({ name: 'viewer key', preset: 'read-only' }),
        });
        return response.status;
      }, stack.file.workspace.slug);
      expect(created).toBe(403);
      // The viewer still reads the Networks view.
      await page.goto(workspacePath('networks'));
      await page.getByTestId('spawn-readiness').first().waitFor();
      expectCleanPage(test, [/status of 403/]);
    } finally {
      await test.close();
    }
  });
});

describe('Networks', () => {
  test("when the owner opens Networks, then the stack's host shows spawn ready with a live heartbeat age, its agents and URLs", async () => {
    interface NetworkHost {
      runtime_instance_id: string;
      name: string;
      spawn_ready: boolean;
      running_agents: number;
      console_public_base_url: string;
      relay_public_url: string | null;
    }
    const view = await hubData<{ hosts: NetworkHost[] }>(
      stack,
      'GET',
      `/api/v1/workspaces/${stack.file.workspace.slug}/networks`,
    );
    expect(view.hosts).toHaveLength(1);
    const host = view.hosts[0]!;
    const test = await ownerPage();
    const { page } = test;
    try {
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Networks' }).click();
      await page.getByRole('heading', { level: 1, name: 'Networks' }).waitFor();
      const card = page.getByRole('article', { name: host.name });
      await card.waitFor();
      await card.getByText('Spawn ready', { exact: true }).waitFor({ timeout: 60_000 });
      await expect(card.getByTestId('console-url').textContent()).resolves.toBe(host.console_public_base_url);
      await expect(card.getByTestId('relay-url').textContent()).resolves.toBe(
        host.relay_public_url ?? 'none',
      );
      await expect(card.getByText(host.runtime_instance_id).count()).resolves.toBe(1);
      // The running agents count is the hub's, read again while the page is open (the reference agent).
      const running = await card.getByTestId('running-agents').textContent();
      expect(Number(running)).toBeGreaterThanOrEqual(0);
      const fresh = await hubData<{ hosts: NetworkHost[] }>(
        stack,
        'GET',
        `/api/v1/workspaces/${stack.file.workspace.slug}/networks`,
      );
      expect(Number(running)).toBe(fresh.hosts[0]!.running_agents);

      // The heartbeat age counts up between heartbeats and starts again when the next one is read.
      const ages: number[] = [];
      for (let i = 0; i < 14; i += 1) {
        const text = (await card.getByTestId('heartbeat-age').textContent()) ?? '';
        const match = /^(\d+) s ago$/.exec(text);
        expect(match).not.toBeNull();
        ages.push(Number(match![1]));
        await page.waitForTimeout(1000);
      }
      expect(ages.some((age, i) => i > 0 && age > ages[i - 1]!)).toBe(true);
      expect(ages.some((age, i) => i > 0 && age < ages[i - 1]!)).toBe(true);
      expect(Math.max(...ages)).toBeLessThanOrEqual(45);
      await test.screenshot('networks');
      expectCleanPage(test);
    } finally {
      await test.close();
    }
  });
});

describe('Audit log', () => {
  test('when the owner filters the log by action and by actor, then the events the key test caused are shown', async () => {
    expect(createdKeyId).toBeDefined();
    const me = await hubData<{ participant: { id: string } }>(stack, 'GET', '/api/v1/me');
    const test = await ownerPage();
    const { page } = test;
    try {
      await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Audit log' }).click();
      await page.getByRole('heading', { level: 1, name: 'Audit log' }).waitFor();
      await page.locator('table.audit-table tbody tr').first().waitFor();
      await test.screenshot('audit-all');

      // A malformed action is caught in the form, before asking.
      await page.getByLabel('Action').fill('API Key!');
      await page.getByRole('button', { name: 'Apply filters' }).click();
      await page.getByText('Use an action such as api_key.created').waitFor();
      await test.screenshot('audit-invalid-filter');

      await page.getByLabel('Action').fill('api_key.*');
      await page.getByRole('button', { name: 'Apply filters' }).click();
      await page.waitForURL(/action=api_key\.\*/);
      const rows = page.locator('table.audit-table tbody tr');
      await rows.first().waitFor();
      const actions = await rows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-action')));
      expect(actions.length).toBeGreaterThan(0);
      expect(actions.every((a) => a?.startsWith('api_key.'))).toBe(true);
      const keyRows = rows.filter({ hasText: createdKeyId! });
      await expect(
        keyRows.evaluateAll((trs) => trs.map((tr) => tr.getAttribute('data-action')).sort()),
      ).resolves.toEqual(['api_key.created', 'api_key.revoked']);
      await test.screenshot('audit-filter-action');

      // Narrow to the owner as actor (kind and id); the key's events stay, every row is the owner's.
      await page.getByLabel('Actor kind').selectOption('participant');
      await page.getByLabel('Actor id').fill(me.participant.id);
      await page.getByRole('button', { name: 'Apply filters' }).click();
      await page.waitForURL(new RegExp(`actor_id=${me.participant.id}`));
      await keyRows.first().waitFor();
      const actors = await page.locator('table.audit-table tbody tr td:nth-child(3)').allTextContents();
      expect(actors.length).toBeGreaterThan(0);
      // Each row names the owner as a person; the id is on hover.
      expect(actors.every((text) => text.startsWith('person '))).toBe(true);
      const actorIds = await page
        .locator('table.audit-table tbody tr td:nth-child(3) span[title]')
        .evaluateAll((cells) => cells.map((cell) => cell.getAttribute('title')));
      expect(actorIds).toHaveLength(actors.length);
      expect(actorIds.every((id) => id === me.participant.id)).toBe(true);
      await test.screenshot('audit-filter-actor');

      // Another actor's view of the same actions holds none of them.
      await page.getByLabel('Actor id').fill('prt_nobody');
      await page.getByRole('button', { name: 'Apply filters' }).click();
      await page.getByText('No events match these filters.').waitFor();
      expectCleanPage(test);
    } finally {
      await test.close();
    }
  });
});

describe('Overview', () => {
  test('when the owner opens the workspace, then it shows hosts ready, agents online, attention and links', async () => {
    const agents = await hubData<{ status: string }[]>(
      stack,
      'GET',
      `/api/v1/workspaces/${stack.file.workspace.slug}/agents`,
    );
    const live = agents.filter((a) => a.status !== 'evicted');
    // An invocation no contract routes: its launch is refused, so it is blocked and needs attention.
    const key = stack.file.api_keys.workflow_all;
    const invocations = `${stack.file.workflow_url}/api/v1/projects/${stack.file.project.id}/workflow/invocations`;
    const intent = `route nothing for ${suffix}`;
    const invoked = await fetch(invocations, {
      method: 'POST',
      headers: { 'x-api-key': key, 'idempotency-key': `web-a-${suffix}`, 'content-type': 'application/json' },
      body: JSON.stringify({ intent }),
    });
    expect(invoked.status).toBe(201);
    const invocationId = ((await invoked.json()) as { data: { invocation_id: string } }).data.invocation_id;
    const launched = await fetch(`${invocations}/${invocationId}/launch`, {
      method: 'POST',
      headers: { 'x-api-key': key },
    });
    expect(launched.status).toBe(409);
    const test = await ownerPage();
    const { page } = test;
    try {
      await page.getByRole('heading', { level: 1, name: 'Development' }).waitFor();
      const hosts = page.getByTestId('summary-hosts');
      await hosts.getByText('1 / 1').waitFor({ timeout: 30_000 });
      await page
        .getByTestId('summary-agents')
        .getByText(new RegExp(`^\\d+ / ${live.length}$`))
        .waitFor();
      await page.getByRole('heading', { level: 2, name: 'Needs attention' }).waitFor();
      const attention = page.getByRole('table', { name: 'Invocations needing attention' });
      // The row names the invocation by its intent and opens it; the id is on hover.
      const row = attention.getByRole('row').filter({ has: page.locator(`a[title="${invocationId}"]`) });
      await row.waitFor();
      await expect(row.textContent()).resolves.toContain(intent);
      await expect(row.textContent()).resolves.not.toContain(invocationId);
      await expect(row.getByRole('cell').nth(3).textContent()).resolves.toMatch(/^blocked/);
      await page
        .getByRole('table', { name: `Projects of Development` })
        .getByRole('cell', { name: stack.file.project.code })
        .waitFor();
      await hosts.getByRole('link', { name: 'Networks' }).click();
      await page.getByRole('heading', { level: 1, name: 'Networks' }).waitFor();
      await page.goBack();
      await page.getByRole('heading', { level: 2, name: 'Needs attention' }).waitFor();
      await page.waitForTimeout(500);
      await test.screenshot('overview');
      expectCleanPage(test, [/status of 403/]);
    } finally {
      await test.close();
    }
  });
});

describe('Networks and Overview tell the truth', () => {
  test('when a host goes stale and another runs on a superseded key, then readiness is unknown, never ✓, each host names its cause and Overview agrees', async () => {
    const slug = stack.file.workspace.slug;
    const register = async (name: string) =>
      hubData<{ host: { id: string } }>(stack, 'POST', `/api/v1/workspaces/${slug}/runtime-hosts`, {
        name,
        workdir_root: '/srv/agents',
        console_public_base_url: 'http://127.0.0.1:5290',
        relay: { bind_host: '127.0.0.1', listen_port: 5291 },
        console_router: { bind_host: '127.0.0.1', listen_port: 5292 },
      });
    const rotate = async (hostId: string) =>
      (
        await hubData<{ auth: { workspace_api_key: string } }>(
          stack,
          'POST',
          `/api/v1/workspaces/${slug}/infrastructure/runtime-config/rotate`,
          { runtime_instance_id: hostId },
        )
      ).auth.workspace_api_key;
    const beat = async (hostId: string, apiKey: string) => {
      const res = await hubCall(
        stack,
        'POST',
        `/api/v1/runtime-hosts/${hostId}/heartbeat`,
        { relay_ready: true, console_router_ready: true, runtime_version: '1.0.0' },
        { 'x-api-key': apiKey },
      );
      expect(res.status).toBe(200);
    };
    const stale = (await register(`stale-${suffix}`)).host.id;
    const staleKey = await rotate(stale);
    await beat(stale, staleKey);
    const staleSince = Date.now();
    const moved = (await register(`moved-${suffix}`)).host.id;
    const oldKey = await rotate(moved);
    await rotate(moved);
    // The host still runs on the superseded key: its heartbeats keep working.
    await beat(moved, oldKey);
    const keepBeating = setInterval(() => void beat(moved, oldKey).catch(() => undefined), 10_000);

    const test = await ownerPage();
    const { page } = test;
    try {
      await page.goto(workspacePath('networks'));
      await page.getByRole('heading', { level: 1, name: 'Networks' }).waitFor();
      const movedCard = page.getByRole('article', { name: `moved-${suffix}` });
      await movedCard
        .locator('[data-cause="runtime_key_superseded"]')
        .getByText(
          new RegExp(
            `^key superseded at \\S+ by ${owner().email.replace(/[.+]/g, '\\$&')}, valid until \\S+;`,
          ),
        )
        .waitFor({ timeout: 30_000 });
      await expect(movedCard.getByTestId('runtime-key').textContent()).resolves.toMatch(/^superseded at /);

      // The stale host: ✓ while its heartbeat is fresh, unknown (never ✓) once it is older than 45 s.
      const staleCard = page.getByRole('article', { name: `stale-${suffix}` });
      await expect(staleCard.locator('li[data-state]').nth(1).getAttribute('data-state')).resolves.toBe(
        'ready',
      );
      await page.waitForTimeout(Math.max(0, staleSince + 47_000 - Date.now()));
      await page.reload();
      await staleCard
        .locator('[data-cause="heartbeat_stale"]')
        .getByText(/^no heartbeat since \S+/)
        .waitFor();
      const states = await staleCard
        .locator('li[data-state]')
        .evaluateAll((items) => items.map((item) => item.getAttribute('data-state')));
      expect(states).toEqual(['not_ready', 'unknown', 'unknown']);
      await expect(staleCard.getByText('Not spawn ready', { exact: true }).count()).resolves.toBe(1);
      await expect(staleCard.textContent()).resolves.not.toContain('✓');
      await test.screenshot('networks-truth');

      // Overview counts what Networks shows: the ready hosts out of all, and names the others' causes.
      const view = await hubData<{ hosts: { spawn_ready: boolean }[] }>(
        stack,
        'GET',
        `/api/v1/workspaces/${slug}/networks`,
      );
      const ready = view.hosts.filter((h) => h.spawn_ready).length;
      await page.goto(workspacePath());
      const hosts = page.getByTestId('summary-hosts');
      await hosts.getByText(`${ready} / ${view.hosts.length}`, { exact: true }).waitFor({ timeout: 30_000 });
      await hosts
        .getByTestId('summary-host-causes')
        .getByText(new RegExp(`^stale-${suffix}: no heartbeat since `))
        .waitFor();
      expectCleanPage(test, [/status of 403/]);
    } finally {
      clearInterval(keepBeating);
      await test.close();
    }
  });
});

describe('Drain on Networks', () => {
  test('when the owner drains a host from its card, then it shows Drained with its cause, and Resume makes it take work again', async () => {
    const slug = stack.file.workspace.slug;
    const name = `drain-${suffix}`;
    const host = (
      await hubData<{ host: { id: string } }>(stack, 'POST', `/api/v1/workspaces/${slug}/runtime-hosts`, {
        name,
        workdir_root: '/srv/agents',
        console_public_base_url: 'http://127.0.0.1:5390',
        relay: { bind_host: '127.0.0.1', listen_port: 5391 },
        console_router: { bind_host: '127.0.0.1', listen_port: 5392 },
      })
    ).host.id;
    const test = await ownerPage();
    const { page } = test;
    try {
      await page.goto(workspacePath('networks'));
      const card = page.getByRole('article', { name });
      await card.getByRole('button', { name: `Drain ${name}` }).click();
      const dialog = page.getByRole('dialog', { name: `Drain ${name}?` });
      await dialog.getByText(/takes no new spawns or workflow stages/).waitFor();
      await dialog.getByRole('button', { name: 'Drain host' }).click();
      // No agent runs there: drained at once.
      await card
        .getByTestId('drain-state')
        .getByText('Drained', { exact: true })
        .waitFor({ timeout: 30_000 });
      await card
        .locator('[data-cause="draining"]')
        .getByText(/^draining since \S+/)
        .waitFor();
      await expect(card.getByTestId('drain-facts').textContent()).resolves.toContain(owner().email);
      await expect(
        hubData<{ drain: { state: string } }>(stack, 'GET', `/api/v1/runtime-hosts/${host}`),
      ).resolves.toMatchObject({ drain: { state: 'drained' } });
      await test.screenshot('networks-drained');

      await card.getByRole('button', { name: `Resume ${name}` }).click();
      await card.getByRole('button', { name: `Drain ${name}` }).waitFor({ timeout: 30_000 });
      await expect(card.getByTestId('drain-state').count()).resolves.toBe(0);
      await expect(
        hubData<{ drain: { state: string } }>(stack, 'GET', `/api/v1/runtime-hosts/${host}`),
      ).resolves.toMatchObject({ drain: { state: 'active' } });
      expectCleanPage(test);
    } finally {
      await test.close();
    }
  });
});
