import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import type { Actor, CredentialResolver } from '@svc/auth';
import type { OpenApiDocument } from '@svc/contracts';
import { createHttpApp } from './http-app';
import { createLogger } from './logger';
import { mountOperations } from './operation-router';
import type { OperationHandlers } from './operation-router';

const problem = { $ref: '#/components/responses/Problem' };
const document: OpenApiDocument = {
  openapi: '3.1.0',
  info: { title: 'Router test', version: '1' },
  paths: {
    '/ping': {
      get: {
        operationId: 'ping',
        'x-svc-actors': ['anonymous'],
        'x-svc-scopes': [],
        responses: { '200': { description: 'ok' } },
      },
    },
    '/version': {
      get: {
        operationId: 'getVersion',
        'x-svc-actors': ['anonymous'],
        'x-svc-scopes': [],
        responses: {
          '200': {
            description: 'the version',
            content: { 'application/json': { schema: { $ref: '#/components/schemas/Item' } } },
          },
          '304': { description: 'unchanged' },
        },
      },
    },
    '/items': {
      post: {
        operationId: 'createItem',
        'x-svc-actors': ['api_key'],
        'x-svc-scopes': ['items:write'],
        requestBody: {
          required: true,
          content: { 'application/json': { schema: { $ref: '#/components/schemas/NewItem' } } },
        },
        responses: {
          '201': {
            description: 'created',
            content: { 'application/json': { schema: { $ref: '#/components/schemas/Item' } } },
          },
          '400': problem,
        },
      },
    },
    '/items/{itemId}': {
      parameters: [
        {
          name: 'itemId',
          in: 'path',
          required: true,
          schema: { type: 'string', pattern: '^itm_[a-z0-9]+$' },
        },
      ],
      get: {
        operationId: 'getItem',
        'x-svc-actors': ['api_key'],
        'x-svc-scopes': ['items:read'],
        parameters: [{ name: 'verbose', in: 'query', schema: { type: 'boolean', default: false } }],
        responses: {
          '200': {
            description: 'item',
            content: { 'application/json': { schema: { $ref: '#/components/schemas/Item' } } },
          },
        },
      },
    },
  },
  components: {
    responses: { Problem: { description: 'problem' } },
    schemas: {
      NewItem: {
        type: 'object',
        required: ['name'],
        additionalProperties: false,
        properties: { name: { type: 'string', minLength: 1, maxLength: 20 } },
      },
      Item: {
        type: 'object',
        required: ['id', 'name'],
        properties: { id: { type: 'string' }, name: { type: 'string' }, verbose: { type: 'boolean' } },
      },
    },
  },
};

type Ops = {
  ping: { responses: { 200: { content?: never } } };
  getVersion: {
    responses: {
      200: { content: { 'application/json': { id: string; name: string } } };
      304: { content?: never };
    };
  };
  createItem: {
    requestBody: { content: { 'application/json': { name: string } } };
    responses: { 201: { content: { 'application/json': { id: string; name: string } } } };
  };
  getItem: {
    parameters: { path: { itemId: string }; query?: { verbose?: boolean } };
    responses: { 200: { content: { 'application/json': { id: string; name: string; verbose?: boolean } } } };
  };
};

const actors: Record<string, Actor> = {
  reader: { kind: 'api_key', keyId: 'key_r', workspaceId: 'ws_1', scopes: ['items:read'], prefix: 'r' },
  writer: { kind: 'api_key', keyId: 'key_w', workspaceId: 'ws_1', scopes: ['items:write'], prefix: 'w' },
};
const resolver: CredentialResolver = { apiKey: async (raw) => actors[raw] ?? null };

let server: Server;
let base: string;

beforeAll(async () => {
  const logger = createLogger({ name: 'router-test', level: 'silent' });
  const handlers: OperationHandlers<Ops> = {
    ping: () => ({ status: 200 }),
    getVersion: ({ req }) =>
      req.headers['if-none-match'] === '"v1"'
        ? { status: 304, headers: { ETag: '"v1"' } }
        : { status: 200, body: { id: 'v1', name: 'version' }, headers: { ETag: '"v1"' } },
    createItem: ({ body }) => ({ status: 201, body: { id: 'itm_1', name: body.name } }),
    getItem: ({ params, query }) =>
      params.itemId === 'itm_broken'
        ? ({ status: 200, body: { id: 42 } } as never)
        : { status: 200, body: { id: params.itemId, name: 'x', verbose: query.verbose } },
  };
  const app = createHttpApp({
    logger,
    bodyLimit: 1024,
    configure: (a) => mountOperations(a, { document, handlers, resolver, logger, validateResponses: true }),
  });
  server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise((resolve) => server.close(resolve)));

async function call(path: string, init: RequestInit = {}) {
  const res = await fetch(`${base}${path}`, init);
  const text = await res.text();
  return {
    status: res.status,
    type: res.headers.get('content-type'),
    headers: res.headers,
    body: text ? JSON.parse(text) : undefined,
  };
}

const json = (key: string, body: string) => ({
  method: 'POST',
  headers: { 'content-type': 'application/json', 'x-api-key': key },
  body,
});

describe('operation router', () => {
  test('when an anonymous operation is called, then no credential is needed', async () => {
    expect((await call('/ping')).status).toBe(200);
  });

  test('when a handler answers 304, then the response has no body and keeps its headers', async () => {
    const fresh = await fetch(`${base}/version`);
    expect(fresh.status).toBe(200);
    expect(fresh.headers.get('etag')).toBe('"v1"');
    const unchanged = await fetch(`${base}/version`, { headers: { 'if-none-match': '"v1"' } });
    expect(unchanged.status).toBe(304);
    expect(unchanged.headers.get('etag')).toBe('"v1"');
    expect(await unchanged.text()).toBe('');
  });

  test('when no credential is sent, then 401 problem+json', async () => {
    const res = await call('/items/itm_1');
    expect(res.status).toBe(401);
    expect(res.type).toContain('application/problem+json');
    expect(res.body.code).toBe('credential_missing');
    expect(res.body.request_id).toMatch(/^req_/);
  });

  test('when an unknown key is sent, then 401 credential_invalid', async () => {
    expect((await call('/items/itm_1', { headers: { 'x-api-key': 'nope' } })).body.code).toBe(
      'credential_invalid',
    );
  });

  test('when the key lacks the scope, then 403 lists the missing scope', async () => {
    const res = await call('/items/itm_1', { headers: { 'x-api-key': 'writer' } });
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ code: 'scope_missing', missing_scopes: ['items:read'] });
  });

  test('when path and query are valid, then they reach the handler coerced', async () => {
    const res = await call('/items/itm_7?verbose=true', { headers: { 'x-api-key': 'reader' } });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ id: 'itm_7', name: 'x', verbose: true });
  });

  test('when a path parameter breaks its pattern, then 400 validation_failed names it', async () => {
    const res = await call('/items/nope', { headers: { 'x-api-key': 'reader' } });
    expect(res.status).toBe(400);
    expect(res.body.errors[0].location).toBe('path/itemId');
  });

  test('when the body is valid, then the handler answers 201', async () => {
    const res = await call('/items', json('writer', '{"name":"a"}'));
    expect(res.status).toBe(201);
    expect(res.body).toEqual({ id: 'itm_1', name: 'a' });
  });

  test('when the body has an unknown field or misses one, then 400 lists each', async () => {
    const res = await call('/items', json('writer', '{"extra":1}'));
    expect(res.status).toBe(400);
    expect(res.body.errors.map((e: { location: string }) => e.location).sort()).toEqual([
      'body/extra',
      'body/name',
    ]);
  });

  test('when the body is malformed JSON, then 400 malformed_json', async () => {
    const res = await call('/items', json('writer', '{"name":'));
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('malformed_json');
  });

  test('when the body is larger than the limit, then 413 payload_too_large', async () => {
    const res = await call('/items', json('writer', JSON.stringify({ name: 'x'.repeat(5000) })));
    expect(res.status).toBe(413);
    expect(res.body.code).toBe('payload_too_large');
  });

  test('when the body is not JSON, then 415', async () => {
    const res = await call('/items', {
      method: 'POST',
      headers: { 'content-type': 'text/plain', 'x-api-key': 'writer' },
      body: 'hi',
    });
    expect(res.status).toBe(415);
  });

  test('when the body is missing, then 400 body_required', async () => {
    const res = await call('/items', { method: 'POST', headers: { 'x-api-key': 'writer' } });
    expect(res.body.code).toBe('body_required');
  });

  test('when the method is not supported, then 405 with Allow', async () => {
    const res = await call('/items', { method: 'DELETE' });
    expect(res.status).toBe(405);
    expect(res.headers.get('allow')).toBe('POST');
  });

  test('when no route matches, then a JSON 404', async () => {
    const res = await call('/nowhere');
    expect(res.status).toBe(404);
    expect(res.body.code).toBe('route_not_found');
  });

  test('when a handler answers outside the contract, then 500 without details', async () => {
    const res = await call('/items/itm_broken', { headers: { 'x-api-key': 'reader' } });
    expect(res.status).toBe(500);
    expect(res.body.code).toBe('response_contract_violation');
    expect(res.body.detail).toBeUndefined();
  });

  test('when a handler is missing, then mounting fails naming it', () => {
    const logger = createLogger({ name: 't', level: 'silent' });
    expect(() =>
      createHttpApp({
        logger,
        configure: (a) =>
          mountOperations(a, {
            document,
            handlers: { ping: () => ({ status: 200 }) } as never,
            resolver,
            logger,
          }),
      }),
    ).toThrow(/missing: getVersion, createItem, getItem/);
  });

  test('when operations are served elsewhere, then they need no handler and get no route', async () => {
    const logger = createLogger({ name: 't', level: 'silent' });
    const app = createHttpApp({
      logger,
      configure: (a) =>
        mountOperations<Ops, 'createItem' | 'getItem'>(a, {
          document,
          handlers: { ping: () => ({ status: 200 }), getVersion: () => ({ status: 304 }) },
          servedElsewhere: ['createItem', 'getItem'],
          logger,
        }),
    });
    const other = app.listen(0, '127.0.0.1');
    await new Promise((resolve) => other.once('listening', resolve));
    try {
      const url = `http://127.0.0.1:${(other.address() as AddressInfo).port}`;
      expect((await fetch(`${url}/ping`)).status).toBe(200);
      // Not mounted: neither a handler nor the 405 of a known path answers, the app's own 404 does.
      const res = await fetch(`${url}/items/itm_1`, { headers: { 'x-api-key': 'reader' } });
      expect(res.status).toBe(404);
      expect(((await res.json()) as { code: string }).code).toBe('route_not_found');
    } finally {
      await new Promise((resolve) => other.close(resolve));
    }
  });

  test('when an operation served elsewhere also has a handler or is not in the contract, then mounting fails naming it', () => {
    const logger = createLogger({ name: 't', level: 'silent' });
    const mount = (servedElsewhere: string[], handlers: Record<string, unknown>) => () =>
      createHttpApp({
        logger,
        configure: (a) =>
          mountOperations(a, {
            document,
            handlers: handlers as never,
            servedElsewhere: servedElsewhere as never,
            resolver,
            logger,
          }),
      });
    const all = {
      ping: () => ({ status: 200 }),
      getVersion: () => ({ status: 304 }),
      createItem: () => ({ status: 201 }),
    };
    expect(mount(['getItem', 'noSuchOperation'], all)).toThrow(
      /served elsewhere but not in the contract: noSuchOperation/,
    );
    expect(mount(['createItem', 'getItem'], all)).toThrow(/served elsewhere: createItem/);
  });
});
