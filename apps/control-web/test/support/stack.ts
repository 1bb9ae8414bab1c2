import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import type { DevStackSettings, NodeProcess } from '@svc/testing';
// The browser tests run the same stack `pnpm start` runs.
import { devStackSettings, removeDevStack, startDevStack } from '@svc/testing';

/** The parts of `.svc/dev-stack.json` the browser tests use. */
export interface StackFile {
  hub_url: string;
  workflow_url: string;
  console_router_url: string;
  control_web_url: string;
  workspace: { id: string; slug: string };
  project: { id: string; code: string };
  participant: { email: string; password: string; token: string };
  api_keys: { workflow_all: string };
  agent: { id: string; name: string; console_url: string };
}

export interface BrowserStack {
  /** What the stack wrote to its `dev-stack.json` (URLs, workspace, the owner's credentials). */
  file: StackFile;
  /** The control web app's origin (`http://127.0.0.1:<port>`). */
  baseUrl: string;
  /** Stops every service, drops the stack's databases and removes its state. */
  stop(): Promise<void>;
}

/**
 * Brings up a real development stack of the test's own (free ports, its own databases and Redis prefix):
 * hub, Workflow API and worker, this machine as runtime host through `svc runtime up`, the reference agent,
 * and the control web app, exactly as `pnpm start` does. Needs the build (`pnpm build`), as `pnpm test` makes.
 */
export async function startBrowserStack(name = 'web', timeoutMs = 150_000): Promise<BrowserStack> {
  const stateDir = mkdtempSync(path.join(os.tmpdir(), `svc-${name}-`));
  const settings: DevStackSettings = await devStackSettings(name, stateDir);
  let process: NodeProcess | undefined;
  try {
    process = await startDevStack(settings.env, timeoutMs);
  } catch (error) {
    await removeDevStack(settings, process);
    throw error;
  }
  const file = JSON.parse(readFileSync(path.join(stateDir, 'dev-stack.json'), 'utf8')) as StackFile;
  const running = process;
  return {
    file,
    baseUrl: file.control_web_url,
    stop: () => removeDevStack(settings, running),
  };
}

/** The development workspace's owner, as the sign-in form takes them. */
export function ownerCredentials(stack: BrowserStack): { email: string; password: string } {
  return { email: stack.file.participant.email, password: stack.file.participant.password };
}

/** A call to the stack's hub as its owner; `headers` stands instead of the owner's token. */
export function hubCall(
  stack: BrowserStack,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = { authorization: `Bearer ${stack.file.participant.token}` },
): Promise<Response> {
  return fetch(`${stack.file.hub_url}${path}`, {
    method,
    headers: { ...headers, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

/** A hub call as the owner that must succeed (setting up what the pages show); the answer's `data`. */
export async function hubData<T>(
  stack: BrowserStack,
  method: string,
  path: string,
  body?: unknown,
): Promise<T> {
  const response = await hubCall(stack, method, path, body);
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
  return ((await response.json()) as { data: T }).data;
}

/** Adds a viewer with a password to the stack's workspace. */
export async function addViewer(
  stack: BrowserStack,
  viewer: { email: string; password: string },
): Promise<void> {
  await hubData(stack, 'POST', `/api/v1/workspaces/${stack.file.workspace.slug}/members`, {
    ...viewer,
    role: 'viewer',
    display_name: 'Viewer',
  });
}

/** A delivery the receiver got: its event type and `webhook-id`. */
export interface ReceivedDelivery {
  event: string;
  id: string;
}

/**
 * A delivery receiver on loopback (the development stack allows loopback receivers) answering 200 to each
 * delivery, subscribed to `events` of the stack's project. A subscription hands out its signing secret, so it
 * is made with the stack's workflow API key, never in the page.
 */
export async function startDeliveryReceiver(stack: BrowserStack, events: string[]) {
  const received: ReceivedDelivery[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      const parsed = JSON.parse(body) as { type: string };
      received.push({ event: parsed.type, id: String(req.headers['webhook-id'] ?? '') });
      res.writeHead(200, { 'content-type': 'text/plain' }).end('ok');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const subscribed = await fetch(
    `${stack.file.workflow_url}/api/v1/projects/${stack.file.project.id}/workflow/delivery-subscriptions`,
    {
      method: 'POST',
      headers: { 'x-api-key': stack.file.api_keys.workflow_all, 'content-type': 'application/json' },
      body: JSON.stringify({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
        events,
      }),
    },
  );
  if (subscribed.status !== 201) {
    server.close();
    throw new Error(`subscribe: ${subscribed.status} ${await subscribed.text()}`);
  }
  return {
    received,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
