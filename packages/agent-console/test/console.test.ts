import { eventually } from '@svc/testing';
import { PROXY_CALLER_HEADER, PROXY_KEY_HEADER } from '../src';
import {
  AGENT_ID,
  OTHER_AGENT_ID,
  PARTICIPANT_ID,
  PROXY_KEY,
  getJson,
  mint,
  startTestConsole,
} from './support/console';
import type { TestConsole } from './support/console';

let t: TestConsole;

beforeAll(async () => {
  t = await startTestConsole();
});
afterAll(async () => {
  await t.close();
});

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const proxied = (caller: string, key = PROXY_KEY) => ({
  [PROXY_KEY_HEADER]: key,
  [PROXY_CALLER_HEADER]: caller,
});

describe('GET /global/health', () => {
  test('when a console ticket for this agent is sent as ?ticket=, then 200 with identity, status and uptime', async () => {
    const res = await getJson(`${t.url}/global/health?ticket=${mint.ticket()}`);
    expect(res.status).toBe(200);
    expect(res.type).toMatch(/^application\/json/);
    expect(res.body).toEqual({
      agent_id: AGENT_ID,
      name: 'console-agent',
      status: 'idle',
      started_at: expect.any(String),
      uptime_seconds: expect.any(Number),
    });
    expect(res.body.uptime_seconds as number).toBeGreaterThanOrEqual(5);
  });

  test('when the ticket is sent as a bearer token, or the agent sends its own token, then 200', async () => {
    expect((await getJson(`${t.url}/global/health`, bearer(mint.ticket()))).status).toBe(200);
    expect((await getJson(`${t.url}/global/health`, bearer(mint.agent()))).status).toBe(200);
  });

  test('when no credential is sent, then a JSON 401 credential_missing (never HTML)', async () => {
    const res = await getJson(`${t.url}/global/health`);
    expect(res.status).toBe(401);
    expect(res.type).toMatch(/^application\/problem\+json/);
    expect(res.body.code).toBe('credential_missing');
  });

  test('when a participant JWT or another agent token is presented directly, then 403 console_router_required', async () => {
    for (const token of [mint.participant(), mint.agent(OTHER_AGENT_ID)]) {
      const res = await getJson(`${t.url}/global/health`, bearer(token));
      expect(res.status).toBe(403);
      expect(res.type).toMatch(/^application\/problem\+json/);
      expect(res.body.code).toBe('console_router_required');
    }
  });

  test('when a ticket names another agent or another workspace, then 401 credential_invalid (it is no credential here at all)', async () => {
    for (const ticket of [mint.ticket({ agent: OTHER_AGENT_ID }), mint.ticket({ ws: 'wsp_other' })]) {
      const viaQuery = await getJson(`${t.url}/global/health?ticket=${ticket}`);
      expect(viaQuery.status).toBe(401);
      expect(viaQuery.body.code).toBe('credential_invalid');
      const viaHeader = await getJson(`${t.url}/global/health`, bearer(ticket));
      expect(viaHeader.status).toBe(401);
      expect(viaHeader.body.code).toBe('credential_invalid');
    }
  });

  test('when a ticket is forged, garbled or an agent token is put in ?ticket=, then 401 credential_invalid', async () => {
    for (const ticket of [mint.forgedTicket(), 'not-a-jwt', mint.agent()]) {
      const res = await getJson(`${t.url}/global/health?ticket=${ticket}`);
      expect(res.status).toBe(401);
      expect(res.body.code).toBe('credential_invalid');
    }
  });

  test('when the router forwards a call with the proxy key and a caller, then 200 for a participant or an agent', async () => {
    expect((await getJson(`${t.url}/global/health`, proxied(`participant:${PARTICIPANT_ID}`))).status).toBe(
      200,
    );
    expect((await getJson(`${t.url}/global/health`, proxied(`agent:${OTHER_AGENT_ID}`))).status).toBe(200);
  });

  test('when the proxy key is wrong or the caller is malformed, then 401 credential_invalid', async () => {
    for (const headers of [
      proxied(`participant:${PARTICIPANT_ID}`, 'wrong-proxy-key'),
      proxied('someone'),
      { [PROXY_KEY_HEADER]: PROXY_KEY },
    ]) {
      const res = await getJson(`${t.url}/global/health`, headers);
      expect(res.status).toBe(401);
      expect(res.type).toMatch(/^application\/problem\+json/);
      expect(res.body.code).toBe('credential_invalid');
    }
  });

  test('when two credentials are sent at once, then 401 credential_invalid', async () => {
    const res = await getJson(`${t.url}/global/health?ticket=${mint.ticket()}`, bearer(mint.agent()));
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('credential_invalid');
  });

  test('when the console has no proxy key, then a forwarded call is refused with 401', async () => {
    const bare = await startTestConsole({ proxyKey: undefined });
    try {
      const res = await getJson(`${bare.url}/global/health`, proxied(`participant:${PARTICIPANT_ID}`, ''));
      expect(res.status).toBe(401);
      expect(res.body.code).toBe('credential_invalid');
    } finally {
      await bare.close();
    }
  });

  test('when the path is unknown, then a JSON 404', async () => {
    const res = await getJson(`${t.url}/nothing/here?ticket=${mint.ticket()}`);
    expect(res.status).toBe(404);
    expect(res.type).toMatch(/^application\/problem\+json/);
    expect(res.body.code).toBe('route_not_found');
  });

  test('when /terminal is requested without a WebSocket upgrade, then 426 upgrade_required', async () => {
    const res = await getJson(`${t.url}/terminal?ticket=${mint.ticket()}`);
    expect(res.status).toBe(426);
    expect(res.body.code).toBe('upgrade_required');
  });
});

interface Message {
  seq: number;
  author: { kind: string; id: string };
  text: string;
  in_reply_to: number | null;
}

describe('chat', () => {
  test('when a participant sends a message, then 202 with the stored message and the reply follows in the list', async () => {
    const sent = await fetch(`${t.url}/chat/messages?ticket=${mint.ticket()}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ text: 'how are you?' }),
    });
    expect(sent.status).toBe(202);
    const { data: message } = (await sent.json()) as { data: Message };
    expect(message).toMatchObject({
      author: { kind: 'participant', id: PARTICIPANT_ID },
      text: 'how are you?',
      in_reply_to: null,
    });

    const reply = await eventually(
      async () => {
        const list = await getJson(`${t.url}/chat/messages?after=${message.seq}`, bearer(mint.ticket()));
        expect(list.status).toBe(200);
        return (list.body.data as Message[]).find((m) => m.in_reply_to === message.seq);
      },
      5_000,
      'the reply in the list',
      { intervalMs: 25 },
    );
    expect(reply).toMatchObject({
      author: { kind: 'agent', id: AGENT_ID },
      text: `participant ${PARTICIPANT_ID} said: how are you?`,
    });
    const page = await getJson(`${t.url}/chat/messages?after=0&limit=1`, bearer(mint.ticket()));
    expect(page.body).toEqual({ data: [expect.objectContaining({ seq: 1 })], next_after: 1 });
  });

  test('when the body is empty or not JSON, then a JSON 400 or 415, and an unauthenticated send is 401', async () => {
    const post = (body: string, type = 'application/json', query = `?ticket=${mint.ticket()}`) =>
      fetch(`${t.url}/chat/messages${query}`, { method: 'POST', headers: { 'content-type': type }, body });
    const empty = await post(JSON.stringify({ text: '' }));
    expect(empty.status).toBe(400);
    expect(((await empty.json()) as { code: string }).code).toBe('validation_failed');
    const plain = await post('hello', 'text/plain');
    expect(plain.status).toBe(415);
    const anonymous = await post(JSON.stringify({ text: 'hi' }), 'application/json', '');
    expect(anonymous.status).toBe(401);
  });

  test('when a stream is open, then earlier and new messages arrive as SSE events with id = seq, and Last-Event-ID resumes', async () => {
    const before = await getJson(`${t.url}/chat/messages?after=0&limit=200`, bearer(mint.agent()));
    const lastSeq = (before.body.next_after as number) ?? 0;
    const controller = new AbortController();
    const res = await fetch(`${t.url}/chat/stream?after=${lastSeq}&ticket=${mint.ticket()}`, {
      signal: controller.signal,
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const reader = res.body!.getReader();
    let received = '';
    const events = () =>
      [...received.matchAll(/id: (\d+)\nevent: message\ndata: (.*)\n\n/g)].map((m) => ({
        id: Number(m[1]),
        message: JSON.parse(m[2]!) as Message,
      }));
    const reading = (async () => {
      for (;;) {
        const { value, done } = await reader.read().catch(() => ({ value: undefined, done: true }));
        if (done) return;
        received += Buffer.from(value!).toString('utf8');
      }
    })();

    await fetch(`${t.url}/chat/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${mint.agent()}` },
      body: JSON.stringify({ text: 'status?' }),
    });
    await eventually(() => events().length >= 2, 5_000, 'both events on the stream', { intervalMs: 25 });
    const [asked, answered] = events();
    expect(asked).toMatchObject({
      id: lastSeq + 1,
      message: { text: 'status?', author: { kind: 'agent', id: AGENT_ID } },
    });
    expect(answered).toMatchObject({ id: lastSeq + 2, message: { in_reply_to: lastSeq + 1 } });
    expect(t.console.conversation.subscriberCount()).toBe(1);
    controller.abort();
    await reading;
    await eventually(() => t.console.conversation.subscriberCount() === 0, 5_000, 'the stream unsubscribed', {
      intervalMs: 25,
    });

    // A reconnect with Last-Event-ID gets only what came after it.
    const resumed = new AbortController();
    const again = await fetch(`${t.url}/chat/stream?ticket=${mint.ticket()}`, {
      headers: { 'last-event-id': String(lastSeq + 1) },
      signal: resumed.signal,
    });
    const againReader = again.body!.getReader();
    let text = '';
    while (!/id: \d+\n/.test(text)) {
      const { value } = await againReader.read();
      text += Buffer.from(value!).toString('utf8');
    }
    resumed.abort();
    expect([...text.matchAll(/id: (\d+)\n/g)].map((m) => Number(m[1]))[0]).toBe(lastSeq + 2);
  });

  test('when the handler fails, then a fixed apology is appended as the reply and the error is only logged', async () => {
    const failing = await startTestConsole({
      chat: () => Promise.reject(new Error('model exploded with secret-value')),
    });
    try {
      await fetch(`${failing.url}/chat/messages?ticket=${mint.ticket()}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ text: 'hi' }),
      });
      await failing.console.close();
      const list = await getJson(`${failing.url}/chat/messages?ticket=${mint.ticket()}`);
      expect((list.body.data as Message[]).map((m) => m.text)).toEqual([
        'hi',
        'Sorry, I could not answer that message.',
      ]);
    } finally {
      await failing.close();
    }
  });
});
