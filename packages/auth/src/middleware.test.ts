import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import express from 'express';
import type { ErrorRequestHandler, Request, RequestHandler, Response } from 'express';
import { AuthError } from './actors';
import type { Actor, CredentialResolver } from './actors';
import {
  generateApiKey,
  generateOpaqueToken,
  hashOpaqueToken,
  parseApiKey,
  verifyApiKeySecret,
  verifyOpaqueToken,
} from './api-keys';
import { TokenError } from './jwt/errors';
import { createTokenIssuer } from './jwt/issuer';
import { generateSigningKey } from './jwt/keys';
import { createStaticJwks } from './jwt/remote-jwks';
import { createTokenVerifier } from './jwt/verifier';
import { authenticate, authorize, requireActor } from './middleware';

const ISSUER = 'https://hub.test';
const signingKey = generateSigningKey();
const issuer = createTokenIssuer({ issuer: ISSUER, keys: [signingKey], activeKid: signingKey.kid });
const verifier = createTokenVerifier({
  issuer: ISSUER,
  getJwks: createStaticJwks({ keys: [signingKey.publicJwk] }),
});

const participantToken = issuer.issue({
  audience: 'participant',
  subject: 'par_1',
  ttlSeconds: 300,
  claims: { email: 'ada@example.test' },
}).token;
const agentToken = issuer.issue({
  audience: 'agent',
  subject: 'agt_1',
  ttlSeconds: 300,
  claims: { workspace_id: 'ws_1', runtime_instance_id: 'rti_1', scopes: ['projects:read'] },
}).token;

const readOnlyKey = generateApiKey();
const relayToken = generateOpaqueToken('rly');
const relayTokenHash = hashOpaqueToken(relayToken);
const SERVICE_TOKEN = 'service-credential-from-config';

/** A resolver shaped like a real service's: JWTs via the verifier, keys and relay tokens via hashes. */
const resolver: CredentialResolver = {
  async bearer(token) {
    try {
      const verified = await verifier.verify(token, { audience: ['participant', 'agent'] });
      if (verified.aud === 'participant') {
        return {
          kind: 'participant',
          participantId: verified.sub,
          email: String(verified.claims.email),
          tokenId: verified.jti,
        };
      }
      return {
        kind: 'agent',
        agentId: verified.sub,
        workspaceId: String(verified.claims.workspace_id),
        runtimeInstanceId: String(verified.claims.runtime_instance_id),
        scopes: verified.claims.scopes as string[],
      };
    } catch (error) {
      if (error instanceof TokenError) {
        return null;
      }
      throw error;
    }
  },
  async apiKey(raw) {
    const parsed = parseApiKey(raw);
    if (
      !parsed ||
      parsed.prefix !== readOnlyKey.prefix ||
      !verifyApiKeySecret(parsed.secret, readOnlyKey.secretHash)
    ) {
      return null;
    }
    return {
      kind: 'api_key',
      keyId: 'key_1',
      workspaceId: 'ws_1',
      scopes: ['projects:read'],
      prefix: parsed.prefix,
    };
  },
  async relayToken(raw) {
    return verifyOpaqueToken(raw, relayTokenHash) ? { kind: 'relay_token' } : null;
  },
  async serviceToken(raw) {
    if (raw === 'database-down') {
      throw new Error('connection refused');
    }
    return raw === SERVICE_TOKEN ? { kind: 'service', service: 'workflow-api' } : null;
  },
};

const whoami: RequestHandler = (req, res) => {
  res.json({ kind: requireActor(req).kind });
};

const onError: ErrorRequestHandler = (error: unknown, _req, res, _next) => {
  if (error instanceof AuthError) {
    res
      .status(error.status)
      .json({ status: error.status, code: error.code, missing: error.missing, detail: error.detail });
    return;
  }
  res.status(503).json({ status: 503, code: 'unavailable' });
};

let server: Server;
let baseUrl: string;

beforeAll(async () => {
  const app = express();
  app.use(authenticate(resolver));
  app.get('/public', (req, res) => {
    res.json({ actor: req.actor ?? null });
  });
  app.get(
    '/projects',
    authorize({ actors: ['participant', 'api_key', 'agent'], scopes: ['projects:read'] }),
    whoami,
  );
  app.post(
    '/artifact-schemas',
    authorize({ actors: ['api_key'], scopes: ['artifact-schemas:read', 'artifact-schemas:write'] }),
    whoami,
  );
  app.post('/spawn', authorize({ actors: ['relay_token'], scopes: [] }), whoami);
  app.get('/internal', authorize({ actors: ['service'], scopes: [] }), whoami);
  app.get('/whoami', whoami);
  app.use(onError);
  server = await new Promise<Server>((resolve) => {
    const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
  });
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise<void>((resolve, reject) => {
    server.close((error) => (error ? reject(error) : resolve()));
    server.closeAllConnections();
  });
});

async function call(
  path: string,
  headers: Record<string, string> = {},
  method = 'GET',
): Promise<{ status: number; body: Record<string, unknown>; text: string }> {
  const response = await fetch(`${baseUrl}${path}`, { method, headers });
  const text = await response.text();
  return { status: response.status, body: JSON.parse(text) as Record<string, unknown>, text };
}

describe('authenticate and authorize in an express app', () => {
  it('when no credential is sent to a guarded route, then it is 401 credential_missing', async () => {
    const { status, body } = await call('/projects');
    expect(status).toBe(401);
    expect(body).toMatchObject({ status: 401, code: 'credential_missing' });
  });

  it('when no credential is sent to an unguarded route, then the request passes without an actor', async () => {
    expect(await call('/public')).toMatchObject({ status: 200, body: { actor: null } });
  });

  it('when a participant bearer token is sent, then the route sees a participant actor', async () => {
    const { status, body } = await call('/public', { authorization: `Bearer ${participantToken}` });
    expect(status).toBe(200);
    expect(body.actor).toEqual({
      kind: 'participant',
      participantId: 'par_1',
      email: 'ada@example.test',
      tokenId: expect.any(String),
    });
  });

  it('when a valid API key with the scope is sent as X-API-Key, then the request succeeds', async () => {
    expect(await call('/projects', { 'X-API-Key': readOnlyKey.key })).toMatchObject({
      status: 200,
      body: { kind: 'api_key' },
    });
  });

  it('when an agent token is sent with a lowercase bearer scheme, then the request succeeds', async () => {
    expect(await call('/projects', { authorization: `bearer ${agentToken}` })).toMatchObject({
      status: 200,
      body: { kind: 'agent' },
    });
  });

  it('when a participant calls a key-only route, then it is 403 actor_not_allowed', async () => {
    const { status, body } = await call(
      '/artifact-schemas',
      { authorization: `Bearer ${participantToken}` },
      'POST',
    );
    expect(status).toBe(403);
    expect(body).toMatchObject({ status: 403, code: 'actor_not_allowed' });
  });

  it('when a broad read key calls an artifact-schema route, then it is 403 scope_missing with the missing list', async () => {
    const { status, body } = await call('/artifact-schemas', { 'x-api-key': readOnlyKey.key }, 'POST');
    expect(status).toBe(403);
    expect(body).toMatchObject({
      status: 403,
      code: 'scope_missing',
      missing: ['artifact-schemas:read', 'artifact-schemas:write'],
    });
  });

  it('when two kinds of credential are sent together, then it is 401 credential_invalid', async () => {
    const { status, body } = await call('/projects', {
      authorization: `Bearer ${participantToken}`,
      'x-api-key': readOnlyKey.key,
    });
    expect(status).toBe(401);
    expect(body).toMatchObject({ status: 401, code: 'credential_invalid' });
  });

  it('when an unguarded route receives two credentials, then it is still refused', async () => {
    const { status } = await call('/public', {
      'x-svc-relay-token': relayToken,
      'x-svc-service-token': SERVICE_TOKEN,
    });
    expect(status).toBe(401);
  });

  it('when an unknown API key is sent, then it is 401 credential_invalid and the key is not echoed', async () => {
    const forged = `svc_${readOnlyKey.prefix}_${'A'.repeat(42)}A`;
    const { status, body, text } = await call('/public', { 'x-api-key': forged });
    expect(status).toBe(401);
    expect(body.code).toBe('credential_invalid');
    expect(text).not.toContain(forged);
    expect(text).not.toContain(readOnlyKey.prefix);
  });

  it.each([
    [
      'a token from another issuer',
      `Bearer ${createTokenIssuer({ issuer: 'https://evil.test', keys: [signingKey], activeKid: signingKey.kid }).issue({ audience: 'participant', subject: 'par_1', ttlSeconds: 60 }).token}`,
    ],
    [
      'a service-audience token',
      `Bearer ${issuer.issue({ audience: 'service', subject: 'x', ttlSeconds: 60 }).token}`,
    ],
    ['the Basic scheme', 'Basic dXNlcjpwYXNz'],
    ['a bare token without scheme', participantToken],
    ['an empty bearer', 'Bearer '],
  ])('when the authorization header carries %s, then it is 401 credential_invalid', async (_label, value) => {
    const { status, body } = await call('/public', { authorization: value });
    expect(status).toBe(401);
    expect(body.code).toBe('credential_invalid');
    expect(['the bearer token header is malformed', 'the bearer token is not valid']).toContain(body.detail);
  });

  it('when an empty API key header is sent, then it is 401 credential_invalid', async () => {
    expect(await call('/public', { 'x-api-key': '' })).toMatchObject({
      status: 401,
      body: { code: 'credential_invalid' },
    });
  });

  it('when the relay token calls spawn, then it succeeds, and elsewhere, then it is 403 actor_not_allowed', async () => {
    expect(await call('/spawn', { 'X-Svc-Relay-Token': relayToken }, 'POST')).toMatchObject({
      status: 200,
      body: { kind: 'relay_token' },
    });
    expect(await call('/projects', { 'x-svc-relay-token': relayToken })).toMatchObject({
      status: 403,
      body: { code: 'actor_not_allowed' },
    });
    expect(await call('/spawn', { 'x-svc-relay-token': generateOpaqueToken('rly') }, 'POST')).toMatchObject({
      status: 401,
      body: { code: 'credential_invalid' },
    });
  });

  it('when a service token calls an internal route, then it succeeds', async () => {
    expect(await call('/internal', { 'x-svc-service-token': SERVICE_TOKEN })).toMatchObject({
      status: 200,
      body: { kind: 'service' },
    });
  });

  it('when the resolver fails, then the error reaches the error handler as an outage, not a 401', async () => {
    expect(await call('/internal', { 'x-svc-service-token': 'database-down' })).toMatchObject({
      status: 503,
      body: { code: 'unavailable' },
    });
  });

  it('when a handler calls requireActor without a credential, then it is 401 credential_missing', async () => {
    expect(await call('/whoami')).toMatchObject({ status: 401, body: { code: 'credential_missing' } });
  });
});

describe('authenticate called directly', () => {
  function run(
    handler: RequestHandler,
    headers: Record<string, string | string[]>,
  ): Promise<{ req: Request; error: unknown }> {
    const req = { headers } as unknown as Request;
    return new Promise((resolve) => {
      void handler(req, {} as Response, (error?: unknown) => resolve({ req, error }));
    });
  }

  it('when the service does not resolve the presented credential kind, then it is credential_invalid', async () => {
    const { error } = await run(authenticate({ apiKey: resolver.apiKey }), {
      'x-svc-relay-token': relayToken,
    });
    expect(error).toBeInstanceOf(AuthError);
    expect(error).toMatchObject({
      code: 'credential_invalid',
      detail: 'this service does not accept a relay token',
    });
  });

  it('when a resolver returns an actor of the wrong kind for the credential, then a server error is raised', async () => {
    const participant: Actor = {
      kind: 'participant',
      participantId: 'par_1',
      email: 'a@b.test',
      tokenId: 't',
    };
    const { req, error } = await run(authenticate({ apiKey: () => Promise.resolve(participant) }), {
      'x-api-key': readOnlyKey.key,
    });
    expect(error).toBeInstanceOf(Error);
    expect(error).not.toBeInstanceOf(AuthError);
    expect(req.actor).toBeUndefined();
  });

  it('when a resolver throws synchronously, then the error is passed to next', async () => {
    const failure = new Error('boom');
    const { error } = await run(
      authenticate({
        bearer: () => {
          throw failure;
        },
      }),
      { authorization: 'Bearer abc' },
    );
    expect(error).toBe(failure);
  });

  it('when a credential header arrives as a list, then it is credential_invalid', async () => {
    const { error } = await run(authenticate(resolver), { 'x-api-key': [readOnlyKey.key, readOnlyKey.key] });
    expect(error).toMatchObject({ code: 'credential_invalid' });
  });

  it('when a valid credential is resolved, then next is called without error and the actor is set', async () => {
    const { req, error } = await run(authenticate(resolver), { 'x-api-key': readOnlyKey.key });
    expect(error).toBeUndefined();
    expect(req.actor).toMatchObject({ kind: 'api_key', prefix: readOnlyKey.prefix });
    expect(requireActor(req)).toBe(req.actor);
  });
});

describe('authorize configuration', () => {
  it('when a rule names an unknown scope or no actor, then creating the middleware fails', () => {
    expect(() => authorize({ actors: ['api_key'], scopes: ['projects:reed'] })).toThrow(/unknown scopes/);
    expect(() => authorize({ actors: [], scopes: [] })).toThrow(TypeError);
  });

  it('when the rule object is changed after creation, then the middleware keeps the original rule', async () => {
    const rule = { actors: ['api_key' as const], scopes: ['projects:read'] };
    const guard = authorize(rule);
    rule.scopes.push('admin:workspace');
    const req = {
      actor: { kind: 'api_key', keyId: 'k', workspaceId: 'w', scopes: ['projects:read'], prefix: 'p' },
    };
    const error = await new Promise<unknown>((resolve) => {
      void guard(req as unknown as Request, {} as Response, (err?: unknown) => resolve(err));
    });
    expect(error).toBeUndefined();
  });
});
