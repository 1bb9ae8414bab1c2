import { createHubClient, unwrap } from '@svc/contracts';
import { createLogger } from '@svc/service-kit';
import {
  createHubDatabase,
  createHubWorkspace,
  eventually,
  newServiceToken,
  registerLiveRuntimeHost,
  registerStartedAgent,
  sleep,
  startHub,
} from '@svc/testing';
import type { HubOwner, LiveRuntimeHost, RunningHub, TestDatabase } from '@svc/testing';
import { InboxResponder, REPLY_PREFIX, replyFor } from './answer-inbox';

describe('inbox responder (real hub)', () => {
  jest.setTimeout(120_000);
  let database: TestDatabase;
  let hub: RunningHub;
  let owner: HubOwner;
  let host: LiveRuntimeHost;
  const logLines: string[] = [];
  const logger = createLogger({
    name: 'inbox-responder-test',
    level: 'debug',
    destination: { write: (line: string) => logLines.push(line) },
  });
  const responders: InboxResponder[] = [];

  beforeAll(async () => {
    database = await createHubDatabase();
    hub = await startHub({
      databaseUrl: database.url,
      serviceToken: newServiceToken(),
      env: { HUB_MANAGED_PROVIDERS: 'local' },
    });
    owner = await createHubWorkspace({
      hubUrl: hub.url,
      databaseUrl: database.url,
      slug: 'inbox-ws',
      email: 'owner@inbox.test',
    });
    await owner.createProject('INBOX');
    host = await registerLiveRuntimeHost(owner, 'inbox-host');
  });

  afterAll(async () => {
    await Promise.all(responders.map((r) => r.stop()));
    host?.stop();
    await hub?.process.stop();
    await database?.drop();
  });

  async function startedAgent(name: string) {
    const agent = await registerStartedAgent(owner, {
      name,
      hostId: host.id,
      projectCode: 'INBOX',
      capabilities: ['ask'],
    });
    const responder = new InboxResponder({
      token: agent.token,
      hubUrl: hub.url,
      agentId: agent.id,
      logger,
      pollMs: 100,
    });
    responders.push(responder);
    return { ...agent, responder, client: createHubClient({ baseUrl: hub.url, token: agent.token }) };
  }

  it('when an agent asks, then the reply goes to the asking agent with the same correlation_id, and the reply is not answered back', async () => {
    const asker = await startedAgent('asker');
    const target = await startedAgent('target');
    asker.responder.start();
    target.responder.start();

    unwrap(
      await asker.client.POST('/api/v1/agents/{agentId}/messages', {
        params: { path: { agentId: target.id } },
        body: { kind: 'ask', body: 'how are you?', correlation_id: 'corr-agent-1' },
      }),
    );

    const reply = await eventually(
      async () => {
        const inbox = unwrap(await asker.client.GET('/api/v1/agents/me/inbox', { params: { query: {} } }));
        return inbox.find((m) => m.correlation_id === 'corr-agent-1' && m.from.id === target.id);
      },
      30_000,
      'the reply in the asker inbox',
    );
    expect(reply).toMatchObject({
      kind: 'ask',
      body: `${REPLY_PREFIX}how are you?`,
      from: { kind: 'agent' },
    });

    // The asker's responder reads the reply but does not answer it: the target gets nothing back.
    await eventually(
      async () => {
        const inbox = unwrap(await asker.client.GET('/api/v1/agents/me/inbox', { params: { query: {} } }));
        return inbox.find((m) => m.id === reply.id && m.read_at !== null);
      },
      30_000,
      'the reply marked read',
    );
    await sleep(500);
    const targetInbox = unwrap(await target.client.GET('/api/v1/agents/me/inbox', { params: { query: {} } }));
    expect(targetInbox.map((m) => m.body)).toEqual(['how are you?']);
    expect(targetInbox[0]!.read_at).not.toBeNull();
  });

  it('when a participant asks, then the reply is a message of the agent to itself with the same correlation_id', async () => {
    const target = await startedAgent('solo');
    target.responder.start();
    unwrap(
      await owner.hub.POST('/api/v1/agents/{agentId}/messages', {
        params: { path: { agentId: target.id } },
        body: { kind: 'ask', body: 'x'.repeat(300), correlation_id: 'corr-participant-1' },
      }),
    );
    const reply = await eventually(
      async () => {
        const inbox = unwrap(
          await owner.hub.GET('/api/v1/agents/{agentId}/inbox', {
            params: { path: { agentId: target.id }, query: {} },
          }),
        );
        return inbox.find((m) => m.correlation_id === 'corr-participant-1' && m.from.id === target.id);
      },
      30_000,
      'the self reply',
    );
    expect(reply.body).toBe(`${REPLY_PREFIX}${'x'.repeat(200)}`);
    expect(logLines.join('\n')).not.toContain(target.token);
  });

  it('when messages are not asks, replies or own messages, then replyFor answers nothing', () => {
    const from = { kind: 'agent' as const, id: 'agt_other' };
    expect(replyFor({ kind: 'nudge', body: 'hi', correlation_id: 'c', from }, 'agt_me')).toBeUndefined();
    expect(replyFor({ kind: 'ask', body: 'hi', correlation_id: null, from }, 'agt_me')).toBeUndefined();
    expect(
      replyFor({ kind: 'ask', body: `${REPLY_PREFIX}hi`, correlation_id: 'c', from }, 'agt_me'),
    ).toBeUndefined();
    expect(
      replyFor(
        { kind: 'ask', body: 'hi', correlation_id: 'c', from: { kind: 'agent', id: 'agt_me' } },
        'agt_me',
      ),
    ).toBeUndefined();
    expect(replyFor({ kind: 'ask', body: 'hi', correlation_id: 'c', from }, 'agt_me')).toEqual({
      to: 'agt_other',
      body: `${REPLY_PREFIX}hi`,
      correlation_id: 'c',
    });
  });
});
