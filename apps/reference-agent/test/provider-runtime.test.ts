import { mkdtempSync, rmSync } from 'node:fs';
import { mkdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { createServer, request as httpRequest } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { createRemoteJwks, createTokenVerifier } from '@svc/auth';
import { unwrap } from '@svc/contracts';
import { createLogger } from '@svc/service-kit';
import {
  createHubDatabase,
  createHubWorkspace,
  eventually,
  exitWithin,
  newServiceToken,
  registerLiveRuntimeHost,
  startBuiltEntryPoint,
  startHub,
} from '@svc/testing';
import type { HubOwner, LiveRuntimeHost, NodeProcess, RunningHub, TestDatabase } from '@svc/testing';
import { createReferenceAgent } from '../src/app';
import type { ReferenceAgent } from '../src/app';
import { EXIT_PROVIDER_MODEL_NOT_FOUND } from '../src/domain/provider-model-not-found';
import { FakePlatform } from './support/fake-platform';

/**
 * The agent's provider runtime against a real hub (built, on its own database): runtime credential refreshes
 * through `POST /api/v1/agents/me/runtime-credential`, the runtime home's `runtime-state.json`, and exit code 78
 * with one `ProviderModelNotFoundError` line when the model is stale. The Workflow API side is the in-memory
 * stand-in (its long poll only), since no stage is worked here.
 */
const APP_DIR = path.resolve(__dirname, '..');
/** The hub keeps runtime credentials for 60 s here, its shortest setting. */
const CREDENTIAL_TTL_SECONDS = 60;
const REFRESH_PATH = '/api/v1/agents/me/runtime-credential';

let database: TestDatabase;
let sql: Client;
let hub: RunningHub;
let owner: HubOwner;
let host: LiveRuntimeHost;
let scratch: string;
const cleanups: (() => Promise<unknown>)[] = [];

beforeAll(async () => {
  database = await createHubDatabase();
  hub = await startHub({
    databaseUrl: database.url,
    serviceToken: newServiceToken(),
    env: {
      HUB_MANAGED_PROVIDERS: 'local',
      HUB_RUNTIME_CREDENTIAL_TTL_SECONDS: String(CREDENTIAL_TTL_SECONDS),
    },
  });
  owner = await createHubWorkspace({
    hubUrl: hub.url,
    databaseUrl: database.url,
    slug: 'runtime',
    email: 'owner@runtime.test',
  });
  host = await registerLiveRuntimeHost(owner, 'runtime-host');
  // The catalog has no API: models that retire during a test are added to it here.
  sql = new Client({ connectionString: database.url });
  await sql.connect();
  scratch = mkdtempSync(path.join(os.tmpdir(), 'provider-runtime-'));
}, 90_000);

afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

afterAll(async () => {
  host?.stop();
  await sql?.end();
  await hub?.process.stop();
  await database?.drop();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
}, 30_000);

let counter = 0;

/** Registers an agent with `model` on the live host and starts it directly at the hub. */
async function startedAgent(model: string) {
  counter += 1;
  const registered = unwrap(
    await owner.hub.POST('/api/v1/workspaces/{workspace}/agents', {
      params: { path: { workspace: owner.workspace.slug } },
      body: {
        name: `runtime-agent-${counter}`,
        runtime_instance_id: host.id,
        capabilities: ['report'],
        workdir: `/srv/agents/runtime-${counter}`,
        model,
      },
    }),
  );
  const started = unwrap(
    await owner.hub.POST('/api/v1/agents/{agentId}/start', {
      params: { path: { agentId: registered.id } },
      body: { launch_path: 'direct' },
    }),
  );
  return { id: registered.id, token: started.agent_token, credential: started.runtime_credential };
}

async function addCatalogModel(id: string) {
  const [provider, model] = id.split('/') as [string, string];
  await sql.query(
    'INSERT INTO provider_models (id, provider, model, display_name) VALUES ($1, $2, $3, $1) ON CONFLICT (id) DO UPDATE SET active = true',
    [id, provider, model],
  );
}

async function retireCatalogModel(id: string) {
  await sql.query('UPDATE provider_models SET active = false WHERE id = $1', [id]);
}

/** The Workflow API stand-in for one agent's token (an empty long poll). */
async function workflowFor(token: string): Promise<FakePlatform> {
  const platform = new FakePlatform(token);
  await platform.start();
  cleanups.push(() => platform.close());
  return platform;
}

async function auditEvents(action: string, agentId: string) {
  const page = unwrap(
    await owner.hub.GET('/api/v1/workspaces/{workspace}/audit-events', {
      params: {
        path: { workspace: owner.workspace.slug },
        query: { action, target_id: agentId, limit: 200 },
      },
    }),
  );
  return page as unknown as { action: string; data: Record<string, unknown> }[];
}

/** A forwarding proxy to the hub that answers 503 to the first `failures` refreshes. */
async function flakyHub(failures: number) {
  const upstream = new URL(hub.url);
  const refreshes: number[] = [];
  const server: Server = createServer((req, res) => {
    if (req.method === 'POST' && req.url === REFRESH_PATH && refreshes.length < failures) {
      refreshes.push(503);
      req.resume();
      res.writeHead(503, { 'content-type': 'application/problem+json' });
      res.end(
        JSON.stringify({ type: 'about:blank', title: 'Unavailable', status: 503, code: 'unavailable' }),
      );
      return;
    }
    const forwarded = httpRequest(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers: { ...req.headers, host: upstream.host },
      },
      (answer) => {
        if (req.method === 'POST' && req.url === REFRESH_PATH) refreshes.push(answer.statusCode ?? 0);
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(res);
      },
    );
    forwarded.on('error', () => res.destroy());
    req.pipe(forwarded);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, refreshes };
}

describe('in process', () => {
  let agent: ReferenceAgent | undefined;
  let lines: string[];
  afterEach(async () => {
    await agent?.stop();
    agent = undefined;
  });

  function start(options: Parameters<typeof createReferenceAgent>[0]): Promise<void> {
    agent = createReferenceAgent(options);
    return agent.start();
  }

  function logger() {
    lines = [];
    return createLogger({
      name: 'provider-runtime-test',
      level: 'debug',
      destination: { write: (line: string) => lines.push(line) },
    });
  }

  const logged = (msg: string) =>
    lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((entry) => entry.msg === msg);

  test('when the runtime credential nears its end, then the agent refreshes it at the hub, retrying failures with backoff, and keeps the newest in memory without logging it', async () => {
    const started = await startedAgent('local/echo');
    const workflow = await workflowFor(started.token);
    const proxy = await flakyHub(2);
    // A credential near its end: refreshed at two thirds of the 1.5 s left.
    await start({
      token: started.token,
      hubUrl: proxy.url,
      workflowUrl: workflow.url,
      logger: logger(),
      pollWaitSeconds: 1,
      idlePollMs: 50,
      hubHeartbeatSeconds: 60,
      retry: { initialDelayMs: 50, maxDelayMs: 200, requestTimeoutMs: 10_000 },
      runtime: {
        credential: { token: started.credential.token, expiresAt: new Date(Date.now() + 1_500) },
      },
    });
    const held = await eventually(
      () => {
        const current = agent!.runtimeCredential();
        return current && current.token !== started.credential.token ? current : undefined;
      },
      30_000,
      'a refreshed credential',
      { intervalMs: 50 },
    );
    expect(proxy.refreshes.slice(0, 3)).toEqual([503, 503, 200]);
    expect(held).toMatchObject({ model: 'local/echo', authorizationSource: 'hub_managed' });
    expect(agent!.runtimeModel()).toBe('local/echo');

    const verifier = createTokenVerifier({
      issuer: hub.url,
      getJwks: createRemoteJwks({ url: `${hub.url}/.well-known/jwks.json` }),
    });
    const verified = await verifier.verify(held.token, { audience: 'runtime' });
    expect(verified.sub).toBe(started.id);
    expect(verified.claims).toMatchObject({ model: 'local/echo', authorization_source: 'hub_managed' });
    expect(held.expiresAt.getTime()).toBe(verified.exp * 1000);
    // The next refresh is at two thirds of the new credential's life, not at once.
    expect(verified.exp - verified.iat).toBe(CREDENTIAL_TTL_SECONDS);

    const refreshed = await auditEvents('credential.runtime.refreshed', started.id);
    expect(refreshed.length).toBeGreaterThanOrEqual(1);
    expect(refreshed[0]?.data).toMatchObject({ model: 'local/echo', authorization_source: 'hub_managed' });
    expect(await auditEvents('credential.runtime.issued', started.id)).toHaveLength(1);

    const retries = logged('runtime credential refresh failed; retrying');
    expect(retries.map((entry) => entry.attempt)).toEqual([1, 2]);
    expect(retries[0]).toMatchObject({ error: { status: 503, code: 'unavailable' } });
    expect(logged('runtime credential refreshed')[0]).toMatchObject({
      attempts: 3,
      model: 'local/echo',
      authorization_source: 'hub_managed',
    });
    const text = lines.join('\n');
    for (const secret of [started.credential.token, held.token, started.token])
      expect(text).not.toContain(secret);
  });

  test('when the runtime home remembers another model that is still in the catalog, then the older runtime keeps it and rewrites its state', async () => {
    await addCatalogModel('local/echo-steady');
    const started = await startedAgent('local/echo');
    const workflow = await workflowFor(started.token);
    const home = path.join(scratch, 'keeps-remembered');
    await mkdir(home, { mode: 0o700 });
    await writeFile(
      path.join(home, 'runtime-state.json'),
      JSON.stringify({ model: 'local/echo-steady', updated_at: '2000-01-01T00:00:00.000Z' }),
      { mode: 0o600 },
    );
    await start({
      token: started.token,
      hubUrl: hub.url,
      workflowUrl: workflow.url,
      logger: logger(),
      pollWaitSeconds: 1,
      idlePollMs: 50,
      hubHeartbeatSeconds: 60,
      runtime: { home },
    });
    expect(agent!.runtimeModel()).toBe('local/echo-steady');
    expect(agent!.runtimeCredential()).toBeUndefined();
    const state = JSON.parse(await readFile(path.join(home, 'runtime-state.json'), 'utf8')) as {
      model: string;
      updated_at: string;
    };
    expect(state.model).toBe('local/echo-steady');
    expect(Date.parse(state.updated_at)).toBeGreaterThan(Date.parse('2000-01-01T00:00:00.000Z'));
    expect(logged('provider runtime ready')[0]).toMatchObject({
      model: 'local/echo-steady',
      hub_model: 'local/echo',
    });
  });
});

describe('the built entry point', () => {
  function run(env: Record<string, string>, name: string): NodeProcess {
    const proc = startBuiltEntryPoint(
      APP_DIR,
      'dist/main.js',
      { HUB_URL: hub.url, AGENT_POLL_WAIT_SECONDS: '1', AGENT_HUB_HEARTBEAT_SECONDS: '5', ...env },
      { name },
    );
    cleanups.push(() => proc.stop('SIGKILL'));
    return proc;
  }

  async function exitCode(proc: NodeProcess): Promise<number | string> {
    const code = await exitWithin(proc, 60_000);
    if (code === 'timeout') throw new Error(`${proc.name} did not exit within 60 s:\n${proc.output()}`);
    return code;
  }

  const linesNaming = (proc: NodeProcess, text: string) =>
    proc
      .output()
      .split('\n')
      .filter((line) => line.includes(text));

  test('when the runtime home remembers a model the catalog no longer has, then it logs one ProviderModelNotFoundError line and exits 78; with only that home cleared, it restarts on the hub model', async () => {
    const started = await startedAgent('local/echo');
    const workflow = await workflowFor(started.token);
    const home = path.join(scratch, 'stale-home');
    const other = path.join(scratch, 'other-home');
    for (const dir of [home, other]) await mkdir(dir, { mode: 0o700 });
    const stale = JSON.stringify({ model: 'local/echo-retired', updated_at: '2000-01-01T00:00:00.000Z' });
    await writeFile(path.join(home, 'runtime-state.json'), stale, { mode: 0o600 });
    await writeFile(path.join(other, 'runtime-state.json'), stale, { mode: 0o600 });
    const env = {
      AGENT_TOKEN: started.token,
      WORKFLOW_URL: workflow.url,
      AGENT_RUNTIME_HOME: home,
      AGENT_RUNTIME_CREDENTIAL: started.credential.token,
      AGENT_RUNTIME_CREDENTIAL_EXPIRES_AT: started.credential.expires_at,
    };

    const first = run(env, 'reference agent (stale runtime home)');
    expect(await exitCode(first)).toBe(EXIT_PROVIDER_MODEL_NOT_FOUND);
    const named = linesNaming(first, 'ProviderModelNotFoundError');
    expect(named).toHaveLength(1);
    expect(JSON.parse(named[0]!)).toMatchObject({
      level: 'error',
      error: 'ProviderModelNotFoundError',
      model: 'local/echo-retired',
      source: 'runtime_home',
      exit_code: 78,
    });
    for (const secret of [started.token, started.credential.token])
      expect(first.output()).not.toContain(secret);

    // What the supervisor does for exit 78: clear this agent's runtime home only, then restart it.
    await rm(path.join(home, 'runtime-state.json'));
    const second = run(env, 'reference agent (cleared runtime home)');
    const statePath = path.join(home, 'runtime-state.json');
    const state = await eventually(
      async () => JSON.parse(await readFile(statePath, 'utf8')) as { model: string; updated_at: string },
      30_000,
      'the new runtime state',
      { intervalMs: 50, describe: () => second.output() },
    );
    expect(state.model).toBe('local/echo');
    expect((await stat(statePath)).mode & 0o777).toBe(0o600);
    expect((await stat(home)).mode & 0o777).toBe(0o700);
    await eventually(
      () => second.output().includes('"reference agent started"'),
      30_000,
      'the hub heartbeat',
      {
        intervalMs: 50,
        describe: () => second.output(),
      },
    );
    expect(second.running()).toBe(true);
    expect(await readFile(path.join(other, 'runtime-state.json'), 'utf8')).toBe(stale);
    expect(await second.stop()).toBe(0);
    expect(linesNaming(second, 'ProviderModelNotFoundError')).toHaveLength(0);
  });

  test('when the hub answers provider_model_unsupported to a refresh, then it logs one ProviderModelNotFoundError line with the hub suggestions and exits 78', async () => {
    await addCatalogModel('local/echo-sunset');
    const started = await startedAgent('local/echo-sunset');
    await retireCatalogModel('local/echo-sunset');
    const workflow = await workflowFor(started.token);
    const proc = run(
      {
        AGENT_TOKEN: started.token,
        WORKFLOW_URL: workflow.url,
        AGENT_RUNTIME_CREDENTIAL: started.credential.token,
        // Restarted near the end of its credential: the refresh is due at once.
        AGENT_RUNTIME_CREDENTIAL_EXPIRES_AT: new Date(Date.now() + 1_000).toISOString(),
      },
      'reference agent (retired model)',
    );
    expect(await exitCode(proc)).toBe(EXIT_PROVIDER_MODEL_NOT_FOUND);
    const named = linesNaming(proc, 'ProviderModelNotFoundError');
    expect(named).toHaveLength(1);
    const line = JSON.parse(named[0]!) as Record<string, unknown>;
    expect(line).toMatchObject({
      level: 'error',
      error: 'ProviderModelNotFoundError',
      model: 'local/echo-sunset',
      source: 'credential_refresh',
      exit_code: 78,
    });
    expect(line.close_matches).toContain('local/echo');
    expect(proc.output()).not.toContain(started.credential.token);
    expect(proc.output()).not.toContain(started.token);
    expect(await auditEvents('credential.runtime.refreshed', started.id)).toHaveLength(0);
  });
});
