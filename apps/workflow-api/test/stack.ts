import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { Writable } from 'node:stream';
import { promisify } from 'node:util';
import { createHubClient, createWorkflowClient, unwrap } from '@svc/contracts';
import type { HubClient, WorkflowClient } from '@svc/contracts';
import { createLogger, createRedis, startHttpServer } from '@svc/service-kit';
import type { RunningServer } from '@svc/service-kit';
import { createTestDatabase, freePort, startBuiltEntryPoint, waitUntilLive } from '@svc/testing';
import type { NodeProcess } from '@svc/testing';
import { createWorkflowApp, MIGRATIONS_DIR } from '../src/app';
import { createDatabase } from '../src/db';
import type { Database } from '../src/db';
import type { DeliverySettings } from '../src/delivery/settings';

const execFileAsync = promisify(execFile);
const hubDir = path.resolve(__dirname, '..', '..', 'hub-api');
const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379';

export interface WorkflowTestStack {
  hubUrl: string;
  url: string;
  workspace: { id: string; slug: string };
  project: { id: string; code: string };
  /** A second workspace's project, for isolation checks. */
  otherProject: { id: string; workspaceId: string; key: (scopes: string[]) => Promise<string> };
  adminToken: string;
  hub: HubClient;
  database: Database;
  logs: string[];
  /** A workspace API key holding exactly these scopes. */
  key(scopes: string[]): Promise<string>;
  client(apiKey?: string, headers?: Record<string, string>): WorkflowClient;
  close(): Promise<void>;
}

/**
 * The Workflow API wired to a real hub: the hub runs from its build (`apps/hub-api/dist`) on its own test
 * database, with a bootstrapped workspace, a project and keys made through its public API; the Workflow API
 * runs in-process on port 0 over its own test database and the real Redis.
 */
export async function startWorkflowTestStack(
  options: {
    /** Delivery settings of the app (signing-secret box, loopback endpoints, retry schedule). */
    delivery?: Partial<DeliverySettings>;
  } = {},
): Promise<WorkflowTestStack> {
  const serviceToken = `svs_${randomBytes(32).toString('base64url')}`;
  const hubDb = await createTestDatabase({
    migrationsDir: path.join(hubDir, 'prisma', 'migrations'),
    prefix: 'svc_hub',
  });
  const hubPort = await freePort();
  const hubUrl = `http://127.0.0.1:${hubPort}`;
  const hubEnv = {
    DATABASE_URL: hubDb.url,
    HUB_PORT: String(hubPort),
    HUB_PUBLIC_URL: hubUrl,
    HUB_SERVICE_TOKEN: serviceToken,
    HUB_ENCRYPTION_KEYS: `k1:${randomBytes(32).toString('base64')}`,
    LOG_LEVEL: 'warn',
  };
  const hubProcess: NodeProcess = startBuiltEntryPoint(hubDir, 'dist/main.js', hubEnv);
  await waitUntilLive(hubProcess, hubUrl, { probe: '/readyz' });

  const password = `pw-${randomBytes(12).toString('hex')}`;
  const bootstrap = async (slug: string, email: string) =>
    JSON.parse(
      (
        await execFileAsync(process.execPath, [path.join(hubDir, 'dist', 'bootstrap.js')], {
          env: {
            PATH: process.env.PATH ?? '',
            DATABASE_URL: hubDb.url,
            BOOTSTRAP_WORKSPACE_SLUG: slug,
            BOOTSTRAP_ADMIN_EMAIL: email,
            BOOTSTRAP_ADMIN_PASSWORD: password,
            LOG_LEVEL: 'warn',
          },
        })
      ).stdout,
    ) as { workspace: { id: string; slug: string } };
  const login = async (email: string) =>
    unwrap(
      await createHubClient({ baseUrl: hubUrl }).POST('/api/v1/auth/login', { body: { email, password } }),
    ).token;
  const makeKey = (token: string, workspace: string) => async (scopes: string[]) =>
    unwrap(
      await createHubClient({ baseUrl: hubUrl, token }).POST('/api/v1/workspaces/{workspace}/api-keys', {
        params: { path: { workspace } },
        body: { name: `test ${scopes.join(' ')}`.slice(0, 200), scopes },
      }),
    ).key;
  const makeProject = async (token: string, workspace: string, code: string) =>
    unwrap(
      await createHubClient({ baseUrl: hubUrl, token }).POST('/api/v1/workspaces/{workspace}/projects', {
        params: { path: { workspace } },
        body: { code, name: code },
      }),
    );

  const main = await bootstrap('acme', 'owner@acme.test');
  const adminToken = await login('owner@acme.test');
  const project = await makeProject(adminToken, main.workspace.slug, 'OPS');
  const other = await bootstrap('rival', 'owner@rival.test');
  const otherToken = await login('owner@rival.test');
  const otherProject = await makeProject(otherToken, other.workspace.slug, 'RIVAL');

  const wfDb = await createTestDatabase({ migrationsDir: MIGRATIONS_DIR, prefix: 'svc_workflow' });
  const database = createDatabase(wfDb.url, { poolSize: 5 });
  const redis = createRedis(REDIS_URL);
  const logs: string[] = [];
  const logger = createLogger({
    name: 'workflow-api',
    level: 'debug',
    destination: new Writable({
      write(chunk, _enc, done) {
        logs.push(chunk.toString());
        done();
      },
    }),
  });
  const app = createWorkflowApp({
    database,
    redis,
    logger,
    publicUrl: 'http://workflow.test',
    hub: { url: hubUrl, serviceToken },
    validateResponses: true,
    ...(options.delivery ? { delivery: options.delivery } : {}),
  });
  const server: RunningServer = await startHttpServer(app, { host: '127.0.0.1', port: 0 });

  return {
    hubUrl,
    url: server.url,
    workspace: main.workspace,
    project: { id: project.id, code: project.code },
    otherProject: {
      id: otherProject.id,
      workspaceId: other.workspace.id,
      key: makeKey(otherToken, other.workspace.slug),
    },
    adminToken,
    hub: createHubClient({ baseUrl: hubUrl, token: adminToken }),
    database,
    logs,
    key: makeKey(adminToken, main.workspace.slug),
    client: (apiKey, headers) => createWorkflowClient({ baseUrl: server.url, apiKey, headers }),
    async close() {
      await server.close(500);
      await redis.quit().catch(() => redis.disconnect());
      await database.close();
      await hubProcess.stop();
      await Promise.all([wfDb.drop(), hubDb.drop()]);
    },
  };
}
