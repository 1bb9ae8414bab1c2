import { dropDatabase } from '@svc/db-kit';
import { testDatabaseServerUrl } from '@svc/testing';
import { createKey, SERVICE_TOKEN, startTestHub } from './support/harness';
import type { TestHub } from './support/harness';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { lintAnnotations } = require('@svc/contracts/documents-rules') as {
  lintAnnotations: (docs: Record<string, unknown>) => string[];
};

let t: TestHub;
beforeAll(async () => {
  t = await startTestHub();
});
afterAll(() => t.close());

describe('system routes', () => {
  test('when /healthz and /readyz are called with Postgres up, then both answer 200', async () => {
    expect((await fetch(`${t.url}/healthz`)).status).toBe(200);
    const ready = await fetch(`${t.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(await ready.json()).toEqual({ status: 'ready', checks: { postgres: 'ok' } });
  });

  test('when /openapi.json is fetched, then it is OpenAPI 3.1 with scope and actor annotations', async () => {
    // eslint-disable-next-line @typescript-eslint/no-explicit-any
    const doc = (await (await fetch(`${t.url}/openapi.json`)).json()) as any;
    expect(doc.openapi).toBe('3.1.0');
    expect(doc.servers).toEqual([{ url: 'http://hub.test' }]);
    expect(doc.paths['/api/v1/contract'].get['x-svc-scopes']).toEqual(['contract:read']);
    expect(Object.keys(doc.paths).some((p: string) => p.startsWith('/internal'))).toBe(false);
  });

  test('when the served documents are linted, then every operation is annotated', async () => {
    const hub = await (await fetch(`${t.url}/openapi.json`)).json();
    const {
      hubInternalDocument,
      workflowDocument,
      workflowWorkerDocument,
      relayDocument,
      consoleRouterDocument,
      agentConsoleDocument,
      runtimeControlDocument,
    } = await import('@svc/contracts');
    expect(
      lintAnnotations({
        hub,
        hubInternal: hubInternalDocument,
        workflow: workflowDocument,
        workflowWorker: workflowWorkerDocument,
        relay: relayDocument,
        consoleRouter: consoleRouterDocument,
        agentConsole: agentConsoleDocument,
        runtimeControl: runtimeControlDocument,
      }),
    ).toEqual([]);
  });

  test('when an unknown route is called, then a JSON 404 problem', async () => {
    const res = await fetch(`${t.url}/api/v1/nothing-here`);
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    expect(((await res.json()) as { code: string }).code).toBe('route_not_found');
  });

  test('when a body is larger than the limit, then 413 problem+json', async () => {
    const res = await fetch(`${t.url}/api/v1/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'a@b.test', password: 'x'.repeat(100_000) }),
    });
    expect(res.status).toBe(413);
    expect(((await res.json()) as { code: string }).code).toBe('payload_too_large');
  });
});

describe('internal API', () => {
  test('when a service introspects a live key, then it gets workspace, scopes and a cache time of at most 30 s', async () => {
    const admin = await t.seedMember('admin');
    const key = await createKey(t, admin, { preset: 'read-only' });
    const res = await t.internal().POST('/internal/v1/api-keys/introspect', { body: { key: key.key } });
    expect(res.data?.data).toMatchObject({
      active: true,
      key_id: key.id,
      workspace_id: admin.workspace.id,
      workspace_slug: admin.workspace.slug,
      scopes: key.scopes,
    });
    expect(res.data?.data.cache_ttl_seconds).toBeLessThanOrEqual(30);
  });

  test('when a service introspects garbage, then active is false and nothing else leaks', async () => {
    const res = await t.internal().POST('/internal/v1/api-keys/introspect', { body: { key: 'svc_nope' } });
    expect(res.data?.data).toEqual({ active: false, cache_ttl_seconds: 30 });
  });

  test('when a workspace key or a wrong service token calls an internal route, then it is refused', async () => {
    const admin = await t.seedMember('admin');
    const key = await createKey(t, admin, { preset: 'automation' });
    const withKey = await fetch(`${t.url}/internal/v1/api-keys/introspect`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key.key },
      body: JSON.stringify({ key: key.key }),
    });
    expect(withKey.status).toBe(403);
    const wrong = await t
      .internal(`${SERVICE_TOKEN}x`)
      .POST('/internal/v1/api-keys/introspect', { body: { key: key.key } });
    expect(wrong.response.status).toBe(401);
  });
});

describe('readiness during a database outage', () => {
  test('when the database disappears, then /readyz fails while /healthz stays up', async () => {
    const own = await startTestHub();
    try {
      await own.database.pool.end();
      const ready = await fetch(`${own.url}/readyz`);
      expect(ready.status).toBe(503);
      expect(((await ready.json()) as { checks: Record<string, string> }).checks.postgres).toMatch(
        /^failed: /,
      );
      expect((await fetch(`${own.url}/healthz`)).status).toBe(200);
    } finally {
      await own
        .close()
        .catch(() =>
          dropDatabase(testDatabaseServerUrl(), new URL(own.databaseUrl).pathname.slice(1), { force: true }),
        );
    }
  });
});
