import { randomBytes } from 'node:crypto';
import { consoleRouterDocument } from '@svc/contracts';
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
import { startEchoAgent } from './support/clients';
import type { EchoAgent } from './support/clients';
import { ConsoleStack } from './support/stack';
import type { InProcessRouter, RegisteredAgent } from './support/stack';

/**
 * The unauthorized matrix of the console router, generated from its document, against the real hub and a
 * live route: each protected (`proxyAgent*`) operation refuses a missing credential (401), a credential this
 * router does not read (API key, service and relay tokens: 401 `credential_invalid`), an agent on the
 * participants-only terminal (403) and a caller of another workspace (403). The router answers all of them
 * itself, before anything is forwarded: a server standing for the agent only has to accept connections.
 *
 * A router serves one host of one workspace, so "a caller of another workspace" is sent to the router of the
 * other workspace's host, on a live route there, with this workspace's credentials.
 */
const matrix = generateAccessMatrix(consoleRouterDocument, {
  unreadCredentials: ['api_key', 'service', 'relay_token'],
});

jest.setTimeout(60_000);

let s: ConsoleStack;
let homeRouter: InProcessRouter;
let otherRouter: InProcessRouter;
let homeAgent: RegisteredAgent;
let otherAgent: RegisteredAgent;
const upstreams: EchoAgent[] = [];

const credentials: CredentialFactories = {
  participant: () => s.home.owner.token,
  agent: () => homeAgent.token,
  api_key: () => s.home.runtimeKey,
  // The router reads neither: well-formed values stand for them.
  service: () => `svs_${randomBytes(32).toString('base64url')}`,
  relay_token: () => `rlt_${randomBytes(32).toString('base64url')}`,
};

const target: MatrixTarget = {
  url: () => homeRouter.url,
  credentials,
  allScopes: [],
  params: () => ({ workspace: s.home.owner.workspace.slug, agentId: homeAgent.id }),
  foreignParams: () => ({ workspace: s.other.owner.workspace.slug, agentId: otherAgent.id }),
};
const foreignTarget: MatrixTarget = { ...target, url: () => otherRouter.url };

beforeAll(async () => {
  s = await ConsoleStack.start();
  for (const ws of [s.home, s.other]) {
    const upstream = await startEchoAgent();
    upstreams.push(upstream);
    const agent = await s.registerAgent(ws, 'matrix-agent', { servePort: upstream.port });
    if (ws === s.home) homeAgent = agent;
    else otherAgent = agent;
  }
  homeRouter = await s.startRouter(s.home);
  otherRouter = await s.startRouter(s.other);
});
afterAll(async () => {
  await Promise.all(upstreams.map((u) => u.close()));
  await s?.close();
});

describe('the generated matrix', () => {
  test('when the console router document is read, then every credential its protected operations need has a factory', () => {
    assertCredentialFactories(matrix, credentials);
    expect(matrix.protected.map((op) => op.operationId).sort()).toEqual([
      'proxyAgentChatList',
      'proxyAgentChatSend',
      'proxyAgentChatStream',
      'proxyAgentHealth',
      'proxyAgentTerminal',
    ]);
  });
});

describe.each(
  nonEmpty(matrix.anonymous, 'anonymous console router operations').map(
    (op) => [`${op.method.toUpperCase()} ${op.path} (${op.operationId})`, op] as const,
  ),
)('%s', (_name, op) => {
  test('when no credential is sent, then it answers (neither 401 nor 403)', async () => {
    const status = await callAnonymous(homeRouter.url, op);
    expect([401, 403]).not.toContain(status);
    expect(op.responses).toContain(String(status));
  });
});

describe.each(casesByOperation(matrix))('%s', (_operation, cases) => {
  test.each(cases.map((c) => [caseTitle(c), c] as const))('%s', async (_name, c) => {
    const { expected, actual } = await checkAccessCase(c, c.foreign ? foreignTarget : target);
    expect(actual).toEqual(expected);
  });
});

test('when the matrix has run, then no refused call reached an agent', () => {
  expect(upstreams.flatMap((u) => u.seen)).toEqual([]);
});
