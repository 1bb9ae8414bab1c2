import { mkdtempSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Writable } from 'node:stream';
import { createStaticJwks, createTokenIssuer, createTokenVerifier, generateSigningKey } from '@svc/auth';
import { createLogger } from '@svc/service-kit';
import type { RunningServer } from '@svc/service-kit';
import { createAgentConsole } from '../../src';
import type { AgentConsole, AgentConsoleOptions } from '../../src';

export const ISSUER = 'http://hub.test';
export const AGENT_ID = 'agt_console_1';
export const OTHER_AGENT_ID = 'agt_console_2';
export const WORKSPACE_ID = 'wsp_console_1';
export const PARTICIPANT_ID = 'prt_console_1';
export const PROXY_KEY = 'proxy-key-for-agt-console-1-0123456789abcdef';

const key = generateSigningKey();
const issuer = createTokenIssuer({ issuer: ISSUER, keys: [key], activeKid: key.kid });
/** Signed with a key the console does not know. */
const strangerKey = generateSigningKey();
const strangerIssuer = createTokenIssuer({ issuer: ISSUER, keys: [strangerKey], activeKid: strangerKey.kid });

/** Credentials as the hub mints them. */
export const mint = {
  ticket: (claims: { agent?: string; ws?: string } = {}, sub = PARTICIPANT_ID) =>
    issuer.issue({
      audience: 'console',
      subject: sub,
      ttlSeconds: 60,
      claims: { agent: claims.agent ?? AGENT_ID, ws: claims.ws ?? WORKSPACE_ID },
    }).token,
  agent: (agentId = AGENT_ID) =>
    issuer.issue({
      audience: 'agent',
      subject: agentId,
      ttlSeconds: 600,
      claims: { workspace_id: WORKSPACE_ID, runtime_instance_id: 'rti_1', agent_name: 'console-agent' },
    }).token,
  participant: () =>
    issuer.issue({
      audience: 'participant',
      subject: PARTICIPANT_ID,
      ttlSeconds: 600,
      claims: { email: 'ada@example.com' },
    }).token,
  service: () => issuer.issue({ audience: 'service', subject: 'workflow-api', ttlSeconds: 600 }).token,
  runtime: (agentId = AGENT_ID) =>
    issuer.issue({
      audience: 'runtime',
      subject: agentId,
      ttlSeconds: 600,
      claims: { workspace_id: WORKSPACE_ID, provider: 'local', model: 'local/echo' },
    }).token,
  forgedTicket: () =>
    strangerIssuer.issue({
      audience: 'console',
      subject: PARTICIPANT_ID,
      ttlSeconds: 60,
      claims: { agent: AGENT_ID, ws: WORKSPACE_ID },
    }).token,
};

export interface TestConsole {
  console: AgentConsole;
  server: RunningServer;
  url: string;
  workdir: string;
  logLines: string[];
  close(): Promise<void>;
}

export async function startTestConsole(overrides: Partial<AgentConsoleOptions> = {}): Promise<TestConsole> {
  const logLines: string[] = [];
  const logger = createLogger({
    name: 'agent-console-test',
    level: 'debug',
    destination: new Writable({
      write(chunk: Buffer, _encoding, done) {
        logLines.push(chunk.toString('utf8'));
        done();
      },
    }),
  });
  const workdir = mkdtempSync(path.join(os.tmpdir(), 'agent-console-'));
  const agentConsole = createAgentConsole({
    agentId: AGENT_ID,
    agentName: 'console-agent',
    workspaceId: WORKSPACE_ID,
    tokens: createTokenVerifier({ issuer: ISSUER, getJwks: createStaticJwks(issuer.jwks()) }),
    proxyKey: PROXY_KEY,
    workdir,
    shell: '/bin/sh',
    status: () => 'idle',
    startedAt: new Date(Date.now() - 5_000),
    chat: async (text, author) => `${author.kind} ${author.id} said: ${text}`,
    logger,
    validateResponses: true,
    ...overrides,
  });
  const server = await agentConsole.listen({ host: '127.0.0.1', port: 0 });
  return {
    console: agentConsole,
    server,
    url: server.url,
    workdir,
    logLines,
    close: () => server.close(1_000),
  };
}

export async function getJson(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; type: string; body: Record<string, unknown> }> {
  const res = await fetch(url, { headers });
  const text = await res.text();
  return { status: res.status, type: res.headers.get('content-type') ?? '', body: JSON.parse(text) };
}
