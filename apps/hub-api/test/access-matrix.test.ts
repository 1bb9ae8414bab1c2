import { ALL_SCOPES } from '@svc/auth';
import { hubDocument, hubInternalDocument } from '@svc/contracts';
import type { OpenApiDocument } from '@svc/contracts';
import { listOperations } from '@svc/service-kit';
import { createKey, startTestHub } from './harness';
import type { SeededMember, TestHub } from './harness';

/**
 * Generated from the contract: for every operation, the unauthorized trio — no credential (401), an actor
 * kind the operation does not accept or a key missing a declared scope (403), and a caller of another
 * workspace (403).
 */
let t: TestHub;
let home: SeededMember;
let stranger: SeededMember;
let homeKey: string;
let strangerKey: string;

beforeAll(async () => {
  t = await startTestHub();
  home = await t.seedMember('owner');
  stranger = await t.seedMember('owner');
  homeKey = (await createKey(t, home, { scopes: [...ALL_SCOPES] })).key;
  strangerKey = (await createKey(t, stranger, { scopes: [...ALL_SCOPES] })).key;
});
afterAll(() => t.close());

const SAMPLE_PARAMS: Record<string, string> = {
  participantId: 'prt_0000',
  keyId: 'key_0000',
  projectId: 'prj_0000',
};

function urlFor(path: string, workspace: string) {
  return path.replace(/\{(\w+)\}/g, (_, name: string) =>
    name === 'workspace' ? workspace : (SAMPLE_PARAMS[name] ?? 'x_0000'),
  );
}

async function call(method: string, url: string, headers: Record<string, string>) {
  const res = await fetch(`${t.url}${url}`, {
    method: method.toUpperCase(),
    headers: { 'content-type': 'application/json', ...headers },
    body: ['post', 'put', 'patch'].includes(method) ? '{}' : undefined,
  });
  return { status: res.status, body: (await res.json().catch(() => ({}))) as { code?: string } };
}

const cases = (doc: OpenApiDocument) =>
  listOperations(doc)
    .filter((op) => !op.actors.includes('anonymous'))
    .map((op) => [`${op.method.toUpperCase()} ${op.path} (${op.operationId})`, op] as const);

describe.each(cases(hubDocument))('%s', (_name, op) => {
  test('when no credential is sent, then 401', async () => {
    const res = await call(op.method, urlFor(op.path, home.workspace.slug), {});
    expect(res.status).toBe(401);
    expect(res.body.code).toBe('credential_missing');
  });

  test('when an actor the contract does not list calls, then 403', async () => {
    const refused: Record<string, string>[] = [];
    if (!op.actors.includes('participant')) refused.push({ authorization: `Bearer ${home.token}` });
    if (!op.actors.includes('api_key')) refused.push({ 'x-api-key': homeKey });
    for (const headers of refused) {
      const res = await call(op.method, urlFor(op.path, home.workspace.slug), headers);
      expect({ status: res.status, code: res.body.code }).toEqual({ status: 403, code: 'actor_not_allowed' });
    }
  });

  if (op.actors.includes('api_key') && op.scopes.length > 0) {
    test('when the key lacks a declared scope, then 403 scope_missing', async () => {
      const lacking = ALL_SCOPES.filter((s) => !op.scopes.includes(s));
      const key = (await createKey(t, home, { scopes: [...lacking] })).key;
      const res = await call(op.method, urlFor(op.path, home.workspace.slug), { 'x-api-key': key });
      expect({ status: res.status, code: res.body.code }).toEqual({ status: 403, code: 'scope_missing' });
    });
  }

  if (op.pathParams.includes('workspace')) {
    test('when a caller of another workspace calls, then 403 workspace_forbidden', async () => {
      const strangers: Record<string, string>[] = [];
      if (op.actors.includes('participant')) strangers.push({ authorization: `Bearer ${stranger.token}` });
      if (op.actors.includes('api_key')) strangers.push({ 'x-api-key': strangerKey });
      for (const headers of strangers) {
        const res = await call(op.method, urlFor(op.path, home.workspace.slug), headers);
        expect({ status: res.status, code: res.body.code }).toEqual({
          status: 403,
          code: 'workspace_forbidden',
        });
      }
    });
  }
});

describe.each(cases(hubInternalDocument))('%s', (_name, op) => {
  test('when no credential is sent, then 401', async () => {
    expect((await call(op.method, op.path, {})).status).toBe(401);
  });

  test('when a workspace key or a participant calls, then 403', async () => {
    const callers: Record<string, string>[] = [
      { 'x-api-key': homeKey },
      { authorization: `Bearer ${home.token}` },
    ];
    for (const headers of callers) {
      expect((await call(op.method, op.path, headers)).status).toBe(403);
    }
  });
});
