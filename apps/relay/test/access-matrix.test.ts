import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { relayDocument } from '@svc/contracts';
import { createLogger, startHttpServer } from '@svc/service-kit';
import type { RunningServer } from '@svc/service-kit';
import {
  assertCredentialFactories,
  caseTitle,
  casesByOperation,
  checkAccessCase,
  createMatrixCoverage,
  generateAccessMatrix,
} from '@svc/testing';
import type { CredentialFactories, MatrixTarget } from '@svc/testing';
import { createRelayService } from '../src/app';
import { loadRelayConfig } from '../src/env';
import { startFakeHub } from './support/fake-hub';
import type { FakeHub } from './support/fake-hub';

/**
 * The unauthorized matrix of the relay, generated from its document. Every operation is anonymous for the shared
 * credential layer: the probes read no credential (each answers as documented with none and with a forged one of
 * every kind), and `POST /spawn` guards the host's relay token itself, before the body (decision 45): without it
 * 401 `relay_token_missing` whatever else is sent, a wrong one 403 `relay_token_invalid`, and the right one
 * passes to the body's validation. A protected operation added to the document generates its cases here, and the
 * credential check below fails until this file can make every credential those cases present.
 */
const matrix = generateAccessMatrix(relayDocument, {
  selfGuarded: {
    relaySpawn: {
      credential: 'relay_token',
      missing: { status: 401, code: 'relay_token_missing' },
      invalid: { status: 403, code: 'relay_token_invalid' },
    },
  },
});
const coverage = createMatrixCoverage(relayDocument, matrix);

const RELAY_TOKEN = randomBytes(32).toString('base64url');

/** How to make each credential for the relay: its own relay token is the only one it reads. */
const credentials: CredentialFactories = { relay_token: () => RELAY_TOKEN };

let hub: FakeHub;
let server: RunningServer;

const target: MatrixTarget = {
  url: () => server.url,
  credentials,
  allScopes: [],
  params: () => ({}),
  foreignParams: () => ({}),
  coverage,
};

beforeAll(async () => {
  hub = await startFakeHub();
  const config = loadRelayConfig({
    RELAY_PORT: '0',
    SVC_HUB_URL: hub.url,
    SVC_WORKSPACE: 'acme',
    SVC_WORKSPACE_API_KEY: 'key-access-matrix',
    SVC_RELAY_TOKEN: RELAY_TOKEN,
  });
  const logger = createLogger({
    name: 'relay',
    level: 'silent',
    destination: new Writable({ write: (_chunk, _encoding, done) => done() }),
  });
  const { app } = createRelayService({ config, logger, validateResponses: true });
  server = await startHttpServer(app, { host: config.host, port: config.port, logger });
});
afterAll(async () => {
  await server.close(0);
  await hub.close();
});

describe('the generated matrix', () => {
  test('when the relay document is read, then every credential its cases present has a factory', () => {
    // Fails as soon as a protected operation is added while `credentials` above cannot make its callers.
    assertCredentialFactories(matrix, credentials);
    expect(matrix.protected.map((op) => op.operationId)).toEqual([]);
  });

  test('when a relay-token operation is added for the shared credential layer, then the credential check fails until factories exist', () => {
    const withProtected = {
      ...relayDocument,
      paths: {
        ...relayDocument.paths,
        '/agents': {
          get: {
            operationId: 'listRelayAgents',
            'x-svc-actors': ['relay_token'],
            'x-svc-scopes': [],
            responses: { '200': {}, '401': {}, '403': {} },
          },
        },
      },
    };
    expect(() => assertCredentialFactories(generateAccessMatrix(withProtected), credentials)).toThrow(
      'the matrix needs credentials of participant, api_key, agent, service, console_ticket, runtime_credential',
    );
  });
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
