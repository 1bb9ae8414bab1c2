import { Writable } from 'node:stream';
import { relayDocument } from '@svc/contracts';
import { createLogger, startHttpServer } from '@svc/service-kit';
import type { RunningServer } from '@svc/service-kit';
import {
  assertCredentialFactories,
  caseTitle,
  casesByOperation,
  callAnonymous,
  checkAccessCase,
  generateAccessMatrix,
  nonEmpty,
} from '@svc/testing';
import type { CredentialFactories, MatrixTarget } from '@svc/testing';
import { buildApp } from '../src/app';
import { loadRelayConfig } from '../src/env';
import { startFakeHub } from './support/fake-hub';
import type { FakeHub } from './support/fake-hub';

/**
 * The unauthorized matrix of the relay, generated from its document. Today every operation is anonymous, so the
 * protected list is empty and the relay reads no credential. A protected operation added to the document (for
 * instance `POST /spawn` for `relay_token`) generates its cases here at once, and the credential check below
 * fails until this file can make every credential those cases present.
 */
const matrix = generateAccessMatrix(relayDocument);

/** How to make each credential for the relay: none yet, since no relay operation needs one. */
const credentials: CredentialFactories = {};

let hub: FakeHub;
let server: RunningServer;

const target: MatrixTarget = {
  url: () => server.url,
  credentials,
  allScopes: [],
  params: () => ({}),
  foreignParams: () => ({}),
};

beforeAll(async () => {
  hub = await startFakeHub();
  const config = loadRelayConfig({
    RELAY_PORT: '0',
    SVC_HUB_URL: hub.url,
    SVC_WORKSPACE: 'acme',
    SVC_WORKSPACE_API_KEY: 'key-access-matrix',
  });
  const logger = createLogger({
    name: 'relay',
    level: 'silent',
    destination: new Writable({ write: (_chunk, _encoding, done) => done() }),
  });
  const app = buildApp({ config, logger, validateResponses: true });
  server = await startHttpServer(app, { host: config.host, port: config.port, logger });
});
afterAll(async () => {
  await server.close(0);
  await hub.close();
});

describe('the generated matrix', () => {
  test('when the relay document is read, then every credential its protected operations need has a factory (today: none protected, none needed)', () => {
    // Fails as soon as a protected operation is added while `credentials` above cannot make its callers.
    assertCredentialFactories(matrix, credentials);
    if (Object.keys(credentials).length === 0) {
      expect(matrix.protected.map((op) => op.operationId)).toEqual([]);
    }
  });

  test('when a relay-token operation such as POST /spawn is added, then the credential check fails until factories exist', () => {
    const withSpawn = {
      ...relayDocument,
      paths: {
        ...relayDocument.paths,
        '/spawn': {
          post: {
            operationId: 'spawnAgent',
            'x-svc-actors': ['relay_token'],
            'x-svc-scopes': [],
            responses: { '202': {}, '401': {}, '403': {} },
          },
        },
      },
    };
    expect(() => assertCredentialFactories(generateAccessMatrix(withSpawn), credentials)).toThrow(
      'the matrix needs credentials of participant, api_key, agent, service',
    );
  });
});

describe.each(
  nonEmpty(matrix.anonymous, 'anonymous relay operations').map(
    (op) => [`${op.method.toUpperCase()} ${op.path} (${op.operationId})`, op] as const,
  ),
)('%s', (_name, op) => {
  test('when no credential is sent, then it answers (neither 401 nor 403)', async () => {
    const status = await callAnonymous(server.url, op);
    expect([401, 403]).not.toContain(status);
    expect(op.responses).toContain(String(status));
  });
});

if (matrix.cases.length > 0) {
  describe.each(casesByOperation(matrix))('%s', (_operation, cases) => {
    test.each(cases.map((c) => [caseTitle(c), c] as const))('%s', async (_name, c) => {
      const { expected, actual } = await checkAccessCase(c, target);
      expect(actual).toEqual(expected);
    });
  });
}
