import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { IncomingHttpHeaders, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { Webhook } from '@svc/sdk';
import { eventually } from '@svc/testing';
import { expectCleanPage, launchBrowser, openPage, signIn } from './support/browser';
import type { TestPage } from './support/browser';
import { invoke } from './support/seed';
import { addViewer, ownerCredentials, startBrowserStack } from './support/stack';
import type { BrowserStack } from './support/stack';

/**
 * Deliveries like an app portal, in a real browser against a real development stack, at a desktop and a
 * phone size: the owner subscribes a local receiver (a real HTTP server of this test) from the page, sees the
 * signing secret once (copied, then gone from the page), sends a test event the receiver verifies with that
 * secret and sees the attempt (status, latency, the receiver's answer with its password masked), disables and
 * enables, sees a real delivery's attempts and resends it, rotates the secret (shown once again; the next test
 * event verifies with the new one), replays everything since a time and deletes the subscription. No page
 * scrolls sideways at 390x844, and axe finds no serious violation in the new dialogs. A subscription disabled
 * by a 410 shows on the Overview; a viewer reads subscriptions without the actions.
 */
jest.setTimeout(300_000);

const AXE_SOURCE = readFileSync(require.resolve('axe-core/axe.min.js'), 'utf8');
const WCAG_TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'];
const SIZES = [
  { name: 'desktop', width: 1366, height: 850 },
  { name: 'phone', width: 390, height: 844 },
] as const;

interface Hit {
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  type: string;
}

let stack: BrowserStack;
let browser: Browser;
let server: Server;
let receiverBase: string;
const hits: Hit[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      const path = req.url ?? '/';
      const type = (JSON.parse(body) as { type: string }).type;
      hits.push({ path, headers: req.headers, body, type });
      if (path.startsWith('/gone')) return res.writeHead(410).end('gone for good');
      // The receiver's answer names a password of its own: the page must show it masked.
      res
        .writeHead(200, { 'content-type': 'application/json' })
        .end(JSON.stringify({ received: true, type, password: 'receiver-side-password' }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiverBase = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  stack = await startBrowserStack('webdeliver');
  browser = await launchBrowser();
}, 300_000);

afterAll(async () => {
  await browser?.close();
  await stack?.stop();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}, 120_000);

const projectPath = () => `/w/${stack.file.workspace.slug}/projects/${stack.file.project.id}`;

/** A Workflow API call with the stack's key (what the page does not do: making events happen). */
async function workflow(method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${stack.file.workflow_url}/api/v1/projects/${stack.file.project.id}/workflow${path}`, {
    method,
    headers: {
      'x-api-key': stack.file.api_keys.workflow_all,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

/** An invocation invoked and cancelled at once: its `invocation.cancelled` event becomes a delivery. */
async function cancelledInvocation(): Promise<string> {
  const id = await invoke(stack, `nothing matches this ${randomBytes(3).toString('hex')}`);
  const res = await workflow('POST', `/invocations/${id}/cancel`, { reason: 'delivery test' });
  if (!res.ok) throw new Error(`cancel: ${res.status} ${await res.text()}`);
  return id;
}

async function seriousViolations(page: Page): Promise<string[]> {
  if (!(await page.evaluate<boolean>("'axe' in window"))) await page.addScriptTag({ content: AXE_SOURCE });
  const violations = await page.evaluate<
    { id: string; impact: string | null; help: string; nodes: { target: unknown[] }[] }[]
  >(
    `axe.run(document, { runOnly: { type: 'tag', values: ${JSON.stringify(WCAG_TAGS)} } }).then((r) => r.violations)`,
  );
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .flatMap((v) => v.nodes.map((n) => `${v.id} at ${JSON.stringify(n.target)}: ${v.help}`));
}

/** How far the page is wider than its window (0 when it fits). */
async function overflow(page: Page): Promise<number> {
  return page.evaluate<number>('document.scrollingElement.scrollWidth - window.innerWidth');
}

async function verifiedBy(secret: string, hit: Hit): Promise<boolean> {
  try {
    await new Webhook(secret, { dedupe: false }).verify(hit.body, hit.headers as Record<string, string>);
    return true;
  } catch {
    return false;
  }
}

describe.each(SIZES)('the deliveries journey at $name size ($width x $height)', (size) => {
  let tab: TestPage;
  const page = (): Page => tab.page;
  const hookPath = `/hooks-${size.name}`;
  let firstSecret = '';
  let secondSecret = '';
  let deliveryInvocation = '';

  beforeAll(async () => {
    // axe-core is injected as an inline script, which the app's policy refuses: this context bypasses it, as
    // the accessibility and responsive suites do (the other suites keep the policy on).
    tab = await openPage(browser, { viewport: { width: size.width, height: size.height }, bypassCSP: true });
    await tab.page
      .context()
      .grantPermissions(['clipboard-read', 'clipboard-write'], { origin: stack.baseUrl });
    await signIn(tab.page, stack.baseUrl, ownerCredentials(stack));
  });
  afterAll(async () => {
    await tab?.close();
  });

  /** The page fits its window (at every size) and has no serious axe violation. */
  async function expectFitsAndPasses(name: string): Promise<void> {
    await tab.screenshot(`deliveries-${size.name}-${name}`);
    expect({ name, excess: Math.max(0, await overflow(page())) }).toEqual({ name, excess: 0 });
    expect({ name, violations: await seriousViolations(page()) }).toEqual({ name, violations: [] });
  }

  const subscriptionRow = () =>
    page()
      .locator('tr[data-subscription]')
      .filter({ hasText: `${receiverBase}${hookPath}` });

  test('when the owner creates a subscription from the page, then its signing secret is shown once, copied, and gone after', async () => {
    await page().goto(`${stack.baseUrl}${projectPath()}/deliveries`);
    await page().getByRole('heading', { level: 1, name: 'Deliveries' }).waitFor();
    await page().getByRole('heading', { name: 'Subscriptions' }).waitFor();
    await page().getByRole('button', { name: 'New subscription' }).click();
    const dialog = page().getByRole('dialog', { name: 'New subscription' });
    await dialog.waitFor();
    await expectFitsAndPasses('create-dialog');
    // Mistakes are said in words with the fix: nothing entered, then an address inside a private network.
    await dialog.getByRole('button', { name: 'Create subscription' }).click();
    await dialog.getByRole('alert').filter({ hasText: 'Enter the endpoint URL' }).waitFor();
    await dialog.getByLabel('Endpoint URL').fill('https://10.1.2.3/hooks');
    await dialog.getByRole('button', { name: 'Create subscription' }).click();
    const refused = dialog.getByRole('alert').filter({ hasText: 'url_resolves_to_forbidden_address' });
    await refused.waitFor();
    expect(await refused.textContent()).toContain('Use the public address of your server');
    await expectFitsAndPasses('create-dialog-refused');
    await dialog.getByLabel('Endpoint URL').fill(`${receiverBase}${hookPath}`);
    await dialog.getByRole('checkbox', { name: /invocation\.cancelled/ }).check();
    await dialog.getByLabel('Description (optional)').fill(`Receiver on the ${size.name}`);
    await dialog.getByRole('button', { name: 'Create subscription' }).click();

    const secretDialog = page().getByRole('dialog', { name: 'Subscription created' });
    await secretDialog.waitFor();
    const shown = secretDialog.getByTestId('signing-secret');
    expect(await shown.textContent()).toMatch(/^whsec_•+$/);
    await expectFitsAndPasses('secret-dialog');
    await secretDialog.getByRole('button', { name: 'Show secret' }).click();
    firstSecret = (await shown.textContent()) ?? '';
    expect(firstSecret).toMatch(/^whsec_[A-Za-z0-9+/=]+$/);
    await secretDialog.getByRole('button', { name: 'Copy secret' }).click();
    await secretDialog.getByRole('status').filter({ hasText: 'Copied' }).waitFor();
    expect(await page().evaluate<string>('navigator.clipboard.readText()')).toBe(firstSecret);
    await secretDialog.getByRole('button', { name: 'I have stored the secret' }).click();
    await secretDialog.waitFor({ state: 'hidden' });

    // Shown once: not in the page, its storage or the list any more.
    await subscriptionRow().waitFor();
    expect(await page().content()).not.toContain(firstSecret);
    const stored = await page().evaluate<string>(
      'JSON.stringify([Object.entries(localStorage), Object.entries(sessionStorage), document.cookie])',
    );
    expect(stored).not.toContain(firstSecret);
    await page().reload();
    await subscriptionRow().waitFor();
    expect(await page().content()).not.toContain(firstSecret);
    expect(await subscriptionRow().textContent()).toContain(`Receiver on the ${size.name}`);
    await expectFitsAndPasses('subscribed');
  });

  test('when a test event is sent, then the receiver verifies it with the secret and the page shows status, latency and the masked answer', async () => {
    const before = hits.length;
    await subscriptionRow()
      .getByRole('button', { name: /^Send test event/ })
      .click();
    const outcome = subscriptionRow().getByTestId('test-outcome');
    await outcome.waitFor();
    expect(await outcome.textContent()).toMatch(/delivered.*answer 200 in \d+ ms/);
    const answer = await outcome.locator('pre').textContent();
    expect(answer).toContain('"received":true');
    expect(answer).toContain('"password":"[REDACTED]"');
    expect(answer).not.toContain('receiver-side-password');
    const test = hits.slice(before).find((h) => h.path === hookPath);
    expect(test?.type).toBe('delivery_subscription.test');
    expect(await verifiedBy(firstSecret, test!)).toBe(true);
    await expectFitsAndPasses('test-sent');
  });

  test('when the subscription is disabled, then it says it was disabled by hand; enabled, it is active again', async () => {
    await subscriptionRow()
      .getByRole('button', { name: /^Disable/ })
      .click();
    await subscriptionRow().getByText('disabled by hand').waitFor();
    await subscriptionRow()
      .getByRole('button', { name: /^Enable/ })
      .click();
    await subscriptionRow().getByText('active', { exact: true }).waitFor();
  });

  test('when an event is delivered, then the delivery lists its attempt with status, latency and answer; resent, a manual attempt follows', async () => {
    const before = hits.length;
    deliveryInvocation = await cancelledInvocation();
    await eventually(
      () => hits.slice(before).some((h) => h.path === hookPath && h.type === 'invocation.cancelled'),
      60_000,
      'the cancellation delivery',
    );
    const delivered = hits
      .slice(before)
      .find((h) => h.path === hookPath && h.type === 'invocation.cancelled')!;
    expect(await verifiedBy(firstSecret, delivered)).toBe(true);
    const deliveryId = String(delivered.headers['webhook-id']);

    const row = page().locator(`tr[data-delivery="${deliveryId}"]`);
    await row.getByText('succeeded').waitFor({ timeout: 30_000 });
    await row.getByRole('button', { name: /Show attempts/ }).click();
    const attempts = page().locator('.delivery-attempts');
    const first = attempts.getByRole('row').filter({ hasText: 'scheduled' });
    await first.waitFor();
    expect(await first.textContent()).toMatch(/200/);
    expect(await first.textContent()).toMatch(/\d+ ms/);
    expect(await first.locator('pre').textContent()).toContain('"password":"[REDACTED]"');
    await expectFitsAndPasses('attempts');

    const count = () => hits.filter((h) => h.headers['webhook-id'] === deliveryId).length;
    await attempts.getByRole('button', { name: 'Replay delivery' }).click();
    await eventually(async () => count() === 2, 30_000, 'the resent delivery');
    await attempts.getByRole('row').filter({ hasText: 'manual' }).waitFor({ timeout: 15_000 });
  });

  test('when the secret is rotated, then the new one is shown once and the next test event verifies with it', async () => {
    await subscriptionRow()
      .getByRole('button', { name: /^Rotate secret/ })
      .click();
    const confirm = page().getByRole('dialog', { name: 'Rotate signing secret' });
    await confirm.waitFor();
    await expectFitsAndPasses('rotate-dialog');
    await confirm.getByRole('button', { name: 'Rotate secret' }).click();
    const secretDialog = page().getByRole('dialog', { name: 'Secret rotated' });
    await secretDialog.waitFor();
    await secretDialog.getByRole('button', { name: 'Show secret' }).click();
    secondSecret = (await secretDialog.getByTestId('signing-secret').textContent()) ?? '';
    expect(secondSecret).toMatch(/^whsec_/);
    expect(secondSecret).not.toBe(firstSecret);
    await secretDialog.getByRole('button', { name: 'I have stored the secret' }).click();
    await secretDialog.waitFor({ state: 'hidden' });
    expect(await page().content()).not.toContain(secondSecret);
    await subscriptionRow()
      .getByText(/Old secret signs too until/)
      .waitFor();

    const before = hits.length;
    await subscriptionRow()
      .getByRole('button', { name: /^Send test event/ })
      .click();
    await eventually(() => hits.slice(before).some((h) => h.path === hookPath), 15_000, 'the test event');
    const test = hits.slice(before).find((h) => h.path === hookPath)!;
    expect(await verifiedBy(secondSecret, test)).toBe(true);
    // During the grace period the old secret still verifies, so receivers switch without losing one.
    expect(await verifiedBy(firstSecret, test)).toBe(true);
  });

  test('when everything since a time is replayed, then the delivery is sent again with the same id', async () => {
    const before = hits.filter((h) => h.path === hookPath && h.type === 'invocation.cancelled').length;
    const form = page().locator('form.replay-form');
    await form
      .getByLabel('Subscription')
      .selectOption({ label: `Receiver on the ${size.name} (${receiverBase}${hookPath})` });
    await form.getByRole('checkbox', { name: 'succeeded' }).check();
    await form.getByRole('button', { name: 'Replay…' }).click();
    const confirm = page().getByRole('dialog', { name: 'Replay deliveries' });
    await confirm.waitFor();
    await expectFitsAndPasses('replay-dialog');
    await confirm.getByRole('button', { name: 'Replay deliveries' }).click();
    await form
      .getByRole('status')
      .filter({ hasText: /1 delivery is queued again/ })
      .waitFor();
    await eventually(
      () => hits.filter((h) => h.path === hookPath && h.type === 'invocation.cancelled').length > before,
      30_000,
      'the replayed delivery',
    );
    const ids = new Set(
      hits
        .filter((h) => h.path === hookPath && h.type === 'invocation.cancelled')
        .map((h) => h.headers['webhook-id']),
    );
    expect(ids.size).toBe(1);
    expect(deliveryInvocation).toMatch(/^inv_/);
  });

  test('when the subscription is deleted after confirmation, then it is gone and the page stayed clean', async () => {
    await subscriptionRow()
      .getByRole('button', { name: /^Delete/ })
      .click();
    const confirm = page().getByRole('dialog', { name: 'Delete subscription' });
    await confirm.waitFor();
    await expectFitsAndPasses('delete-dialog');
    await confirm.getByRole('button', { name: 'Delete subscription' }).click();
    await page().getByRole('status').filter({ hasText: 'Deleted the subscription' }).waitFor();
    await subscriptionRow().waitFor({ state: 'detached' });
    await expectFitsAndPasses('deleted');
    // The one failed request is the private address the journey entered on purpose (400).
    expectCleanPage(tab, [/status of 400 \(Bad Request\)/]);
    expect(tab.consoleErrors.filter((text) => /status of 400/.test(text))).toHaveLength(1);
  });
});

describe('operational events and other roles', () => {
  test('when a receiver answers 410, then its subscription is disabled and the Overview says so', async () => {
    const res = await workflow('POST', '/delivery-subscriptions', {
      url: `${receiverBase}/gone`,
      events: ['invocation.cancelled'],
      description: 'A receiver that went away',
    });
    expect(res.status).toBe(201);
    await cancelledInvocation();
    await eventually(() => hits.some((h) => h.path === '/gone'), 60_000, 'the delivery answered 410');
    const tab = await openPage(browser, { viewport: { width: 390, height: 844 } });
    try {
      await signIn(tab.page, stack.baseUrl, ownerCredentials(stack));
      const problems = tab.page.locator('.delivery-problems');
      await eventually(
        async () => {
          await tab.page.reload();
          await tab.page.getByRole('heading', { name: 'Deliveries' }).waitFor();
          return (await problems.count()) > 0;
        },
        60_000,
        'the disabled subscription on the Overview',
      );
      const item = problems.getByRole('listitem').filter({ hasText: `${receiverBase}/gone` });
      expect(await item.textContent()).toMatch(/subscription disabled.*410 Gone/);
      await item.getByRole('link').click();
      await tab.page.getByRole('heading', { level: 1, name: 'Deliveries' }).waitFor();
      await tab.screenshot('deliveries-phone-overview-link');
      expect(await overflow(tab.page)).toBeLessThanOrEqual(0);
      expectCleanPage(tab);
    } finally {
      await tab.close();
    }
  });

  test('when a viewer opens the deliveries, then the subscriptions are listed without any action', async () => {
    const viewer = {
      email: `viewer-${randomBytes(3).toString('hex')}@example.test`,
      password: `pw-${randomBytes(12).toString('hex')}`,
    };
    await addViewer(stack, viewer);
    const tab = await openPage(browser);
    try {
      await signIn(tab.page, stack.baseUrl, viewer);
      await tab.page.goto(`${stack.baseUrl}${projectPath()}/deliveries`);
      await tab.page
        .locator('tr[data-subscription]')
        .filter({ hasText: `${receiverBase}/gone` })
        .waitFor();
      expect(await tab.page.getByRole('button', { name: 'New subscription' }).count()).toBe(0);
      expect(await tab.page.getByRole('button', { name: /^Send test event/ }).count()).toBe(0);
      expect(await tab.page.getByRole('button', { name: 'Replay…' }).count()).toBe(0);
      expectCleanPage(tab);
    } finally {
      await tab.close();
    }
  });
});
