import path from 'node:path';
import { Writable } from 'node:stream';
import { createStaticJwks, createTokenIssuer, createTokenVerifier, generateSigningKey } from '@svc/auth';
import { createLogger } from '@svc/service-kit';
import { eventually, startBuiltEntryPoint } from '@svc/testing';
import type { NodeProcess } from '@svc/testing';
import { createReferenceAgent } from '../src/app';
import type { ReferenceAgent } from '../src/app';
import { FakePlatform } from './support/fake-platform';

/**
 * The reference agent with its console served (`AGENT_SERVE_PORT`): health answers a console ticket with the
 * agent's identity and the tracker's idle/busy, and chat answers from what the agent knows.
 */
const ISSUER = 'http://hub.console-test';
const key = generateSigningKey();
const issuer = createTokenIssuer({ issuer: ISSUER, keys: [key], activeKid: key.kid });
const AGENT_ID = 'agt_ref_console';
const WORKSPACE_ID = 'wsp_ref_console';
const token = issuer.issue({
  audience: 'agent',
  subject: AGENT_ID,
  ttlSeconds: 3_600,
  claims: { workspace_id: WORKSPACE_ID, runtime_instance_id: 'rti_1', agent_name: 'ref-console' },
}).token;
const ticket = () =>
  issuer.issue({
    audience: 'console',
    subject: 'prt_1',
    ttlSeconds: 60,
    claims: { agent: AGENT_ID, ws: WORKSPACE_ID },
  }).token;

let platform: FakePlatform;

beforeEach(async () => {
  platform = new FakePlatform(token);
  platform.jwks = issuer.jwks();
  await platform.start();
});
afterEach(async () => {
  await platform.close();
});

describe('in process', () => {
  let agent: ReferenceAgent | undefined;
  afterEach(async () => {
    await agent?.stop();
    agent = undefined;
  });

  test('when started with a console, then health answers a ticket with its identity and chat answers from what it knows', async () => {
    const logger = createLogger({
      name: 'reference-agent-test',
      level: 'silent',
      destination: new Writable({ write: (_chunk, _encoding, done) => done() }),
    });
    agent = createReferenceAgent({
      token,
      hubUrl: platform.url,
      workflowUrl: platform.url,
      logger,
      pollWaitSeconds: 1,
      idlePollMs: 50,
      hubHeartbeatSeconds: 60,
      console: {
        port: 0,
        workdir: process.cwd(),
        tokens: createTokenVerifier({ issuer: ISSUER, getJwks: createStaticJwks(issuer.jwks()) }),
      },
    });
    await agent.start();
    const url = agent.consoleUrl()!;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+$/);

    const health = await fetch(`${url}/global/health?ticket=${ticket()}`);
    expect(health.status).toBe(200);
    expect(await health.json()).toMatchObject({ agent_id: AGENT_ID, name: 'ref-console', status: 'idle' });
    expect((await fetch(`${url}/global/health`)).status).toBe(401);

    const sent = await fetch(`${url}/chat/messages?ticket=${ticket()}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'what are you doing?' }),
    });
    expect(sent.status).toBe(202);
    const reply = await eventually(
      async () => {
        const list = (await (await fetch(`${url}/chat/messages?ticket=${ticket()}`)).json()) as {
          data: { text: string; in_reply_to: number | null }[];
        };
        return list.data.find((m) => m.in_reply_to === 1);
      },
      2_000,
      'the chat reply',
      { intervalMs: 20 },
    );
    expect(reply.text).toBe(
      [
        `I am ref-console (${AGENT_ID}), a reference agent; I am idle.`,
        'No stage is in progress.',
        'You asked: "what are you doing?"',
      ].join('\n'),
    );

    await agent.stop();
    await expect(fetch(`${url}/global/health?ticket=${ticket()}`)).rejects.toThrow();
  });
});

describe('the built entry point', () => {
  let proc: NodeProcess | undefined;
  afterEach(async () => {
    await proc?.stop();
    proc = undefined;
  });

  test('when AGENT_SERVE_PORT=0 is set, then it logs the bound port and serves health to a ticket', async () => {
    let port: number | undefined;
    proc = startBuiltEntryPoint(
      path.resolve(__dirname, '..'),
      'dist/main.js',
      {
        AGENT_TOKEN: token,
        HUB_URL: platform.url,
        HUB_ISSUER: ISSUER,
        WORKFLOW_URL: platform.url,
        AGENT_SERVE_PORT: '0',
        AGENT_POLL_WAIT_SECONDS: '1',
      },
      {
        name: 'reference agent (serve)',
        onLine: (line) => {
          if (line.includes('"console serving"')) port = (JSON.parse(line) as { port: number }).port;
        },
      },
    );
    const bound = await eventually(() => port, 10_000, 'the "console serving" line', {
      intervalMs: 50,
      describe: () => proc!.output(),
    });
    const res = await fetch(`http://127.0.0.1:${bound}/global/health?ticket=${ticket()}`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ agent_id: AGENT_ID, name: 'ref-console' });
    const anonymous = await fetch(`http://127.0.0.1:${bound}/global/health`);
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  });
});
