import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { workflowWorkerDocument } from '@svc/contracts';
import {
  casesByOperation,
  caseTitle,
  checkAccessCase,
  createMatrixCoverage,
  createTestDatabase,
  freePort,
  generateAccessMatrix,
  nonEmpty,
  startBuiltEntryPoint,
  testRedisUrl,
  waitUntilLive,
} from '@svc/testing';
import type { MatrixTarget, NodeProcess } from '@svc/testing';
import { MIGRATIONS_DIR } from '../src/app';

/**
 * The unauthorized matrix of the Workflow API's worker (its probe port), against the built worker process. Every
 * operation of its document is anonymous: each must answer as documented without a credential and with a forged
 * credential of every kind (the probes read none). A protected operation added to the document generates its
 * refusals here, and the credential factories below (none) then fail the run until it can make its callers.
 */
const matrix = generateAccessMatrix(workflowWorkerDocument);
const coverage = createMatrixCoverage(workflowWorkerDocument, matrix);

jest.setTimeout(30_000);

let db: Awaited<ReturnType<typeof createTestDatabase>>;
let worker: NodeProcess;
let url: string;

const target: MatrixTarget = {
  url: () => url,
  credentials: {},
  allScopes: [],
  params: () => ({}),
  foreignParams: () => ({}),
  coverage,
};

beforeAll(async () => {
  db = await createTestDatabase({ migrationsDir: MIGRATIONS_DIR, prefix: 'svc_workflow' });
  const port = await freePort();
  url = `http://127.0.0.1:${port}`;
  worker = startBuiltEntryPoint(path.resolve(__dirname, '..'), 'dist/worker-main.js', {
    DATABASE_URL: db.url,
    REDIS_URL: testRedisUrl(),
    HUB_SERVICE_TOKEN: `svs_${randomBytes(32).toString('base64url')}`,
    WORKFLOW_QUEUE_PREFIX: `t${randomBytes(3).toString('hex')}`,
    WORKFLOW_WORKER_PORT: String(port),
    LOG_LEVEL: 'warn',
  });
  await waitUntilLive(worker, url, { probe: '/readyz' });
});
afterAll(async () => {
  await worker?.stop();
  await db?.drop();
});

test('when the worker document is read, then every operation is anonymous (a protected one needs factories here)', () => {
  expect(nonEmpty(matrix.anonymous, 'anonymous worker operations').length).toBe(matrix.operations.length);
});

describe.each(casesByOperation(matrix))('%s', (_operation, cases) => {
  test.each(cases.map((c) => [caseTitle(c), c] as const))('%s', async (_name, c) => {
    const { expected, actual } = await checkAccessCase(c, target);
    expect(actual).toEqual(expected);
  });
});

test('when the matrix has run, then every operation of the document was proven for every credential kind', () => {
  expect(coverage.missing()).toEqual([]);
});
