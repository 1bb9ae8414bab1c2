import { randomBytes } from 'node:crypto';
import { consoleRouterDocument } from '@svc/contracts';
import {
  assertCredentialFactories,
  caseTitle,
  casesByOperation,
  checkAccessCase,
  createMatrixCoverage,
  generateAccessMatrix,
} from '@svc/testing';
import type { CredentialFactories, MatrixTarget } from '@svc/testing';
import { startEchoAgent } from './support/clients';
import type { EchoAgent } from './support/clients';
import { ConsoleStack } from './support/stack';
import type { InProcessRouter, RegisteredAgent } from './support/stack';

/**
 * The unauthorized matrix of the console router, generated from its document, against the real hub and a
 * live route: each protected (`proxyAgent*`) operation refuses a missing credential (401), a forged one of every
 * kind (401), a credential this router does not read (API key, service and relay tokens, an agent's runtime
 * credential: 401 `credential_invalid`), an agent on the participants-only terminal (403), a caller of another
 * workspace (403) and another workspace's agent under this workspace's prefix (404: this host does not route
 * it). A console ticket is read as its participant, so it is refused only where participants are. The probes
 * and `/routes/refresh` read no credential. The router answers all of these itself, before anything is
 * forwarded: a server standing for the agent only has to accept connections.
 *
 * A router serves one host of one workspace, so "a caller of another workspace" is sent to the router of the
 * other workspace's host, on a live route there, with this workspace's credentials.
 */
const matrix = generateAccessMatrix(consoleRouterDocument, {
  unreadCredentials: ['api_key', 'service', 'relay_token', 'runtime_credential'],
  tokenActors: { console_ticket: 'participant' },
});
const coverage = createMatrixCoverage(consoleRouterDocument, matrix);

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
  console_ticket: () => s.ticket(s.home, homeAgent.id),
  // The agent's runtime credential, renewed by the agent itself at the hub.
  runtime_credential: async () => {
    const res = await fetch(`${s.hub.url}/api/v1/agents/me/runtime-credential`, {
      method: 'POST',
      headers: { authorization: `Bearer ${homeAgent.token}` },
    });
    if (!res.ok) throw new Error(`runtime credential: HTTP ${res.status} ${await res.text()}`);
    return ((await res.json()) as { data: { token: string } }).data.token;
  },
};

const target: MatrixTarget = {
  url: () => homeRouter.url,
  credentials,
  allScopes: [],
  params: () => ({ workspace: s.home.owner.workspace.slug, agentId: homeAgent.id }),
  foreignParams: () => ({ workspace: s.other.owner.workspace.slug, agentId: otherAgent.id }),
  coverage,
};
/** The other workspace's router, on its own live route: a caller of this workspace has no business there. */
const foreignTarget: MatrixTarget = { ...target, url: () => otherRouter.url, params: target.foreignParams };

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

describe.each(casesByOperation(matrix))('%s', (_operation, cases) => {
  test.each(cases.map((c) => [caseTitle(c), c] as const))('%s', async (_name, c) => {
    const { expected, actual } = await checkAccessCase(
      c,
      c.check === 'other_workspace' ? foreignTarget : target,
    );
    expect(actual).toEqual(expected);
  });
});

test('when the matrix has run, then every operation of the document was proven for every credential kind', () => {
  expect(coverage.missing()).toEqual([]);
});

test('when the matrix has run, then no refused call reached an agent', () => {
  expect(upstreams.flatMap((u) => u.seen)).toEqual([]);
});
