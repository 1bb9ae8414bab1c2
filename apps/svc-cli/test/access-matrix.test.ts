import { mkdtempSync, promises as fs } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { runtimeControlDocument } from '@svc/contracts';
import {
  caseTitle,
  casesByOperation,
  checkAccessCase,
  createMatrixCoverage,
  generateAccessMatrix,
  nonEmpty,
} from '@svc/testing';
import type { MatrixTarget } from '@svc/testing';
import { AgentSupervisor } from '../src/data/agent-supervisor';
import { startControlServer } from '../src/data/control-server';
import type { ControlServer, RuntimeControlStatus } from '../src/data/control-server';
import { controlSocketPath, unixSocketFetch } from '../src/data/runtime-control-client';

/**
 * The matrix of the runtime control API (`svc runtime up`'s local socket). It takes no credential: who may call it
 * is decided by the file system (a 0600 socket in the profile's 0700 state directory, decision 34). So every
 * operation must answer as documented without a credential and with a forged credential of every kind (none is
 * read, none changes an answer), and the socket must be the owner's alone. The server is the real control server
 * over a real supervisor (no agents), reached over its Unix socket.
 */
const matrix = generateAccessMatrix(runtimeControlDocument);
const coverage = createMatrixCoverage(runtimeControlDocument, matrix);

let stateDir: string;
let socketPath: string;
let control: ControlServer;
let supervisor: AgentSupervisor;

/** What `svc runtime up` reports about itself; the matrix only reads it back. */
const status = async (): Promise<RuntimeControlStatus> => ({
  pid: process.pid,
  started_at: new Date().toISOString(),
  profile: 'matrix',
  workspace: 'acme',
  runtime_instance_id: 'rti_matrix',
  relay: { url: 'http://127.0.0.1:1', pid: null, ready: false, detail: 'not started' },
  console_router: { url: 'http://127.0.0.1:2', pid: null, ready: false, detail: 'not started' },
  heartbeat: { interval_ms: 10_000, last_ok_at: null, last_error: null },
  agents: supervisor.list(),
});

const target: MatrixTarget = {
  url: () => 'http://localhost',
  credentials: {},
  allScopes: [],
  params: () => ({}),
  foreignParams: () => ({}),
  fetch: (url, init) => unixSocketFetch(socketPath, 10_000)(new Request(url, init)),
  coverage,
};

beforeAll(async () => {
  stateDir = mkdtempSync(path.join(os.tmpdir(), 'svc-control-matrix-'));
  await fs.chmod(stateDir, 0o700);
  socketPath = controlSocketPath(stateDir);
  supervisor = new AgentSupervisor({
    stateDir,
    baseEnv: { PATH: process.env.PATH ?? '' },
    consoleProxyKey: () => 'unused',
    onRoutesChanged: () => undefined,
    graceMs: 1_000,
    log: () => undefined,
  });
  control = await startControlServer({ socketPath, supervisor, status });
});
afterAll(async () => {
  await control?.close();
  await fs.rm(stateDir, { recursive: true, force: true });
});

test('when the control socket is listening, then only its owner can reach it (0600 socket in a 0700 directory)', async () => {
  expect((await fs.stat(socketPath)).mode & 0o777).toBe(0o600);
  expect((await fs.stat(stateDir)).mode & 0o777).toBe(0o700);
});

test('when the document is read, then every operation is anonymous (a protected one needs factories here)', () => {
  expect(nonEmpty(matrix.anonymous, 'runtime control operations').length).toBe(matrix.operations.length);
});

describe.each(casesByOperation(matrix))('%s', (_operation, cases) => {
  test.each(cases.map((c) => [caseTitle(c), c] as const))('%s', async (_name, c) => {
    const { expected, actual } = await checkAccessCase(c, target);
    expect(actual).toEqual(expected);
  });
});

test('when the matrix has run, then every operation of the document was proven for every credential kind', () => {
  expect(coverage.missing()).toEqual([]);
  expect(supervisor.list()).toEqual([]);
});
