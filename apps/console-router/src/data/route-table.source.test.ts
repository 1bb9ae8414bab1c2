import { Writable } from 'node:stream';
import { createLogger } from '@svc/service-kit';
import { RouteTableSource, RouteTableUnavailableError } from './route-table.source';

const logger = createLogger({
  name: 'route-table-test',
  level: 'silent',
  destination: new Writable({ write: (_chunk, _encoding, done) => done() }),
});

function table(version: string, agents: string[]) {
  return {
    data: {
      host_id: 'rti_1',
      workspace: { id: 'wsp_1', slug: 'dev' },
      version,
      generated_at: '2026-01-01T00:00:00.000Z',
      members: ['prt_1'],
      routes: agents.map((id, i) => ({
        agent_id: id,
        agent_name: id,
        route: `/dev/agents/${id}`,
        serve_port: 4341 + i,
        status: 'online',
        peers: [],
      })),
    },
  };
}

/** A hub whose answers the test scripts, recording each request's URL and headers. */
function scriptedHub() {
  const calls: { url: string; headers: Record<string, string> }[] = [];
  const answers: (() => Response | Promise<Response>)[] = [];
  const fetchImpl = (async (url: string, init: RequestInit) => {
    calls.push({ url, headers: init.headers as Record<string, string> });
    const next = answers.shift();
    if (!next) throw new Error('unexpected request');
    return next();
  }) as unknown as typeof fetch;
  return { calls, answers, fetchImpl };
}

const json =
  (body: unknown, status = 200) =>
  () =>
    new Response(JSON.stringify(body), { status, headers: { etag: '"x"' } });

function source(
  hub: ReturnType<typeof scriptedHub>,
  overrides: Partial<ConstructorParameters<typeof RouteTableSource>[0]> = {},
) {
  return new RouteTableSource({
    hubUrl: 'http://user:secret@hub.test/base/',
    hostId: 'rti_1',
    apiKey: 'svk_key',
    pollMs: 60_000,
    timeoutMs: 1_000,
    logger,
    fetch: hub.fetchImpl,
    ...overrides,
  });
}

describe('the route table source', () => {
  test('when the key is replaced, then the next load sends the new key and keeps the table it holds', async () => {
    const hub = scriptedHub();
    hub.answers.push(json(table('v1', ['a1'])), () => new Response(null, { status: 304 }));
    const routes = source(hub, { apiKey: undefined });
    expect(routes.missingSettings()).toEqual(['SVC_WORKSPACE_API_KEY']);
    routes.setApiKey('svk_old');
    await routes.refresh();
    routes.setApiKey('svk_new');

    const again = await routes.refresh();

    expect(hub.calls.map((c) => c.headers['x-api-key'])).toEqual(['svk_old', 'svk_new']);
    expect(again.version).toBe('v1');
    expect(routes.currentApiKey()).toBe('svk_new');
  });

  test('when loaded twice, then the second request names the version held and a 304 keeps the table', async () => {
    const hub = scriptedHub();
    hub.answers.push(json(table('v1', ['a1'])), () => new Response(null, { status: 304 }));
    const routes = source(hub);

    await routes.refresh();
    const again = await routes.refresh();

    expect(again.version).toBe('v1');
    expect(again.find('dev', 'a1')?.servePort).toBe(4341);
    expect(hub.calls.map((c) => c.url)).toEqual([
      'http://hub.test/base/api/v1/runtime-hosts/rti_1/console-routes',
      'http://hub.test/base/api/v1/runtime-hosts/rti_1/console-routes',
    ]);
    expect(hub.calls[0]!.headers['x-api-key']).toBe('svk_key');
    expect(hub.calls[0]!.headers['if-none-match']).toBeUndefined();
    expect(hub.calls[1]!.headers['if-none-match']).toBe('"v1"');
  });

  test('when a newer version is loaded, then change listeners hear of it once; a 304 or the first load is no change', async () => {
    const hub = scriptedHub();
    hub.answers.push(
      json(table('v1', ['a1'])),
      () => new Response(null, { status: 304 }),
      json(table('v2', ['a1', 'a2'])),
      json(table('v2', ['a1', 'a2'])),
    );
    const routes = source(hub);
    const heard: string[] = [];
    routes.onChange((changed) => heard.push(`${changed.version}:${changed.routes.length}`));

    for (let i = 0; i < 4; i++) await routes.refresh();

    expect(heard).toEqual(['v2:2']);
  });

  test('when concurrent refreshes are asked for, then one request serves them all', async () => {
    const hub = scriptedHub();
    let release!: () => void;
    hub.answers.push(async () => {
      await new Promise<void>((resolve) => (release = resolve));
      return json(table('v1', ['a1']))();
    });
    const routes = source(hub);

    const all = Promise.all([routes.refresh(), routes.refresh(), routes.refresh()]);
    await new Promise((resolve) => setImmediate(resolve));
    release();
    const tables = await all;

    expect(hub.calls).toHaveLength(1);
    expect(new Set(tables).size).toBe(1);
  });

  test('when the hub fails, then the last good table stays in use and the failure is named', async () => {
    const hub = scriptedHub();
    hub.answers.push(
      json(table('v1', ['a1'])),
      () => Promise.reject(Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNREFUSED' } })),
      json({ code: 'credential_invalid' }, 401),
      json(table('v2', ['a1', 'a2'])),
    );
    const routes = source(hub);
    await routes.refresh();

    await expect(routes.refresh()).rejects.toThrow(
      new RouteTableUnavailableError('hub unreachable (ECONNREFUSED)'),
    );
    expect(routes.current()?.version).toBe('v1');
    await expect(routes.refresh()).rejects.toThrow('hub answered HTTP 401 credential_invalid');
    expect(routes.state()).toMatchObject({ lastError: 'hub answered HTTP 401 credential_invalid' });
    expect(routes.current()?.find('dev', 'a1')).toBeDefined();

    await routes.refresh();
    expect(routes.current()?.version).toBe('v2');
    expect(routes.state().lastError).toBeUndefined();
  });

  test('when the host id or key is missing, then nothing is asked and each is named', async () => {
    const hub = scriptedHub();
    const routes = source(hub, { hostId: undefined, apiKey: undefined });

    await expect(routes.refresh()).rejects.toThrow(
      'SVC_RUNTIME_INSTANCE_ID and SVC_WORKSPACE_API_KEY are not set',
    );
    expect(routes.missingSettings()).toEqual(['SVC_RUNTIME_INSTANCE_ID', 'SVC_WORKSPACE_API_KEY']);
    expect(hub.calls).toHaveLength(0);
  });
});

describe('reloads for unknown agents', () => {
  test('when requests name an unknown agent, then the table is reloaded at most once a second', async () => {
    const hub = scriptedHub();
    let now = Date.parse('2026-01-01T00:00:00.000Z');
    const routes = source(hub, { now: () => new Date(now) });
    hub.answers.push(json(table('v1', ['agt_a'])));
    await routes.refresh();
    hub.answers.push(json(table('v2', ['agt_a', 'agt_b'])));
    expect((await routes.refreshOnMiss())?.find('dev', 'agt_b')?.agentId).toBe('agt_b');
    now += 500;
    expect((await routes.refreshOnMiss())?.version).toBe('v2');
    expect(hub.calls).toHaveLength(2);
    now += 600;
    hub.answers.push(() => Promise.reject(new Error('hub down')));
    expect((await routes.refreshOnMiss())?.version).toBe('v2');
    expect(hub.calls).toHaveLength(3);
  });
});
