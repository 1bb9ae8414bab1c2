import { Writable } from 'node:stream';
import { createWorkflowClient } from '@svc/contracts';
import type { HubClient, WorkflowClient } from '@svc/contracts';
import { createLogger, createRedis, startHttpServer } from '@svc/service-kit';
import type { RunningServer } from '@svc/service-kit';
import {
  createHubDatabase,
  createHubWorkspace,
  createWorkflowDatabase,
  newServiceToken,
  obliterateQueues,
  startHub,
  testRedisUrl,
  uniqueQueuePrefix,
} from '@svc/testing';
import { createWorkflowService } from '../../src/app';
import type { WorkflowService } from '../../src/app';
import { createDatabase } from '../../src/db';
import type { Database } from '../../src/db';
import type { AdmissionSettings } from '../../src/domain/admission-settings';
import type { DeliverySettings } from '../../src/domain/delivery-settings';
import { DELIVERY_QUEUE } from '../../src/data/delivery.queue';
import { RECONCILE_QUEUE } from '../../src/data/reconcile.queue';

const REDIS_URL = testRedisUrl();

export interface WorkflowTestStack {
  hubUrl: string;
  /** The service token the hub's internal API accepts from the Workflow API. */
  serviceToken: string;
  url: string;
  workspace: { id: string; slug: string };
  project: { id: string; code: string };
  /** A second workspace's project, for isolation checks. */
  otherProject: { id: string; workspaceId: string; key: (scopes: string[]) => Promise<string> };
  adminToken: string;
  hub: HubClient;
  database: Database;
  /** This stack's own queue key prefix (its keys are removed at close). */
  queuePrefix: string;
  logs: string[];
  /** The service's use-case dependencies, its held invocation reads (`?wait=`) and its admission. */
  service: Pick<WorkflowService, 'deps' | 'invocationWaits' | 'admission'>;
  /** A workspace API key holding exactly these scopes. */
  key(scopes: string[]): Promise<string>;
  client(apiKey?: string, headers?: Record<string, string>): WorkflowClient;
  close(): Promise<void>;
}

/**
 * The Workflow API wired to a real hub: the hub runs from its build (`apps/hub-api/dist`) on its own test
 * database, with a bootstrapped workspace, a project and keys made through its public API; the Workflow API
 * runs in-process on port 0 over its own test database and the real Redis, under a queue prefix of its own.
 */
export async function startWorkflowTestStack(
  options: {
    /** Delivery settings of the app (signing-secret box, loopback endpoints, retry schedule). */
    delivery?: Partial<DeliverySettings>;
    /** Admission of requests (decision 100). */
    admission?: Partial<AdmissionSettings>;
  } = {},
): Promise<WorkflowTestStack> {
  const serviceToken = newServiceToken();
  const [hubDb, wfDb] = await Promise.all([createHubDatabase(), createWorkflowDatabase()]);
  const queuePrefix = uniqueQueuePrefix('svct');
  // The hub announces revocations and membership changes on this stack's Redis prefix (decision 47).
  const hub = await startHub({
    databaseUrl: hubDb.url,
    serviceToken,
    env: { HUB_REDIS_URL: REDIS_URL, HUB_REDIS_PREFIX: queuePrefix },
  });

  const workspace = (slug: string) =>
    createHubWorkspace({ hubUrl: hub.url, databaseUrl: hubDb.url, slug, email: `owner@${slug}.test` });
  const owner = await workspace('acme');
  const project = await owner.createProject('OPS');
  const rival = await workspace('rival');
  const otherProject = await rival.createProject('RIVAL');

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
  const service = createWorkflowService({
    database,
    redis,
    logger,
    publicUrl: 'http://workflow.test',
    hub: { url: hub.url, serviceToken },
    queuePrefix,
    validateResponses: true,
    ...(options.delivery ? { delivery: options.delivery } : {}),
    ...(options.admission ? { admission: options.admission } : {}),
  });
  const server: RunningServer = await startHttpServer(service.app, { host: '127.0.0.1', port: 0 });

  return {
    hubUrl: hub.url,
    serviceToken,
    url: server.url,
    workspace: owner.workspace,
    project,
    otherProject: {
      id: otherProject.id,
      workspaceId: rival.workspace.id,
      key: (scopes) => rival.createApiKey(scopes),
    },
    adminToken: owner.token,
    hub: owner.hub,
    database,
    queuePrefix,
    logs,
    service: { deps: service.deps, invocationWaits: service.invocationWaits, admission: service.admission },
    key: (scopes) => owner.createApiKey(scopes),
    client: (apiKey, headers) => createWorkflowClient({ baseUrl: server.url, apiKey, headers }),
    async close() {
      await server.close(500);
      await service.close();
      await redis.quit().catch(() => redis.disconnect());
      await database.close();
      await hub.process.stop();
      await obliterateQueues(REDIS_URL, queuePrefix, [RECONCILE_QUEUE, DELIVERY_QUEUE]);
      await Promise.all([wfDb.drop(), hubDb.drop()]);
    },
  };
}
