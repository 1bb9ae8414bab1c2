import { ALL_SCOPES } from '@svc/auth';
import { agentConsoleDocument } from '@svc/contracts';
import {
  assertCredentialFactories,
  caseTitle,
  casesByOperation,
  checkAccessCase,
  createMatrixCoverage,
  CREDENTIAL_HEADERS,
  forgedCredential,
  generateAccessMatrix,
} from '@svc/testing';
import type { AccessCase, CredentialFactories, MatrixTarget } from '@svc/testing';
import type { IncomingMessage } from 'node:http';
import WebSocket from 'ws';
import { mint, startTestConsole } from './support/console';
import type { TestConsole } from './support/console';

/**
 * The unauthorized matrix of the agent console, generated from `x-svc-actors` / `x-svc-scopes` of its document:
 * no credential (401), a forged credential of every kind (401) and, for the terminal (participants only), the
 * agent's own token (403 `actor_not_allowed`). The console reads no API key, service token, relay token or runtime
 * credential, so each is answered 401 `credential_invalid`; a console ticket is read as its participant. The
 * terminal's cases run twice: over plain HTTP (access is decided before the handler answers 426 to a request that
 * is not an upgrade) and as WebSocket upgrades, which the console answers itself.
 */
const matrix = generateAccessMatrix(agentConsoleDocument, {
  unreadCredentials: ['api_key', 'service', 'relay_token', 'runtime_credential'],
  tokenActors: { console_ticket: 'participant' },
});
const coverage = createMatrixCoverage(agentConsoleDocument, matrix);

let t: TestConsole;

const credentials: CredentialFactories = {
  participant: () => mint.participant(),
  // The agent's own token: the only agent credential the console accepts directly.
  agent: () => mint.agent(),
  api_key: () => 'svc_abcdefghijkl_0123456789012345678901234567890123456789012',
  service: () => mint.service(),
  relay_token: () => 'relay-token-0123456789abcdef0123456789abcdef',
  console_ticket: () => mint.ticket(),
  runtime_credential: () => mint.runtime(),
};

const target: MatrixTarget = {
  url: () => t.url,
  credentials,
  allScopes: ALL_SCOPES,
  params: () => ({}),
  foreignParams: () => ({}),
  coverage,
};

beforeAll(async () => {
  t = await startTestConsole();
});
afterAll(async () => {
  await t.close();
});

test('when the document is read, then every operation is protected and every credential the cases need has a factory', () => {
  assertCredentialFactories(matrix, credentials);
  expect(matrix.anonymous).toEqual([]);
  expect(matrix.protected.map((op) => op.operationId).sort()).toEqual([
    'getAgentConsoleHealth',
    'listAgentChatMessages',
    'openAgentTerminal',
    'sendAgentChatMessage',
    'streamAgentChatMessages',
  ]);
  expect(matrix.cases.find((c) => c.id === 'openAgentTerminal wrong_actor agent')).toBeDefined();
});

describe.each(casesByOperation(matrix))('%s', (_operation, cases) => {
  test.each(cases.map((c) => [caseTitle(c), c] as const))('%s', async (_name, c) => {
    const { expected, actual } = await checkAccessCase(c, target);
    expect(actual).toEqual(expected);
  });
});

async function upgradeAnswer(c: AccessCase): Promise<{ status: number; code: string }> {
  const factory = c.actor ? credentials[c.actor] : undefined;
  const credential = c.forged
    ? forgedCredential(c.actor!)
    : factory
      ? await (factory as () => Promise<string>)()
      : undefined;
  const headers = c.actor && credential !== undefined ? CREDENTIAL_HEADERS[c.actor](credential) : {};
  const ws = new WebSocket(`${t.url.replace('http', 'ws')}${c.operation.path}`, { headers });
  ws.on('error', () => undefined);
  return new Promise((resolve, reject) => {
    ws.once('open', () => reject(new Error('the upgrade was accepted')));
    ws.once('unexpected-response', (_req, res: IncomingMessage) => {
      let text = '';
      res.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, code: (JSON.parse(text) as { code: string }).code }),
      );
    });
  });
}

describe('GET /terminal as a WebSocket upgrade', () => {
  const terminalCases = matrix.cases.filter((c) => c.operation.operationId === 'openAgentTerminal');
  test.each(terminalCases.map((c) => [caseTitle(c), c] as const))('%s', async (_name, c) => {
    expect(await upgradeAnswer(c)).toEqual(c.expected);
  });
});

test('when the matrix has run, then every operation of the document was proven for every credential kind', () => {
  expect(coverage.missing()).toEqual([]);
});
