import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import type { OpenApiDocument } from '@svc/contracts';
import { createHttpApp } from './http-app';
import { createLogger } from './logger';
import { mountOperations } from './operation-router';

/**
 * A path with a literal segment answers for its own methods and 405 for the others, even when a path with a
 * parameter in that place comes first in the document and supports the method.
 */
const anonymous = { 'x-svc-actors': ['anonymous'], 'x-svc-scopes': [] };
const ok = { responses: { '204': { description: 'done' } } };
const document: OpenApiDocument = {
  openapi: '3.1.0',
  info: { title: 'Specificity', version: '1' },
  paths: {
    '/things/{thingId}': {
      parameters: [
        { name: 'thingId', in: 'path', required: true, schema: { type: 'string', pattern: '^thg_' } },
      ],
      get: { operationId: 'getThing', ...anonymous, ...ok },
      delete: { operationId: 'deleteThing', ...anonymous, ...ok },
    },
    '/things/replay': { post: { operationId: 'replayThings', ...anonymous, ...ok } },
    '/things/me': { get: { operationId: 'getMyThing', ...anonymous, ...ok } },
    '/groups/{groupId}/things/{thingId}/links': {
      get: { operationId: 'listLinks', ...anonymous, ...ok },
      post: { operationId: 'addLink', ...anonymous, ...ok },
      delete: { operationId: 'removeLinks', ...anonymous, ...ok },
    },
    '/groups/{groupId}/things': { get: { operationId: 'listGroupThings', ...anonymous, ...ok } },
    '/groups/{groupId}/settings/x/y': { get: { operationId: 'getDeepSetting', ...anonymous, ...ok } },
  },
};

let server: Server;
let base: string;
const seen: string[] = [];

beforeAll(async () => {
  const logger = createLogger({ name: 'router-test', level: 'silent' });
  const answer = (name: string) => () => {
    seen.push(name);
    return { status: 204 as const };
  };
  const app = createHttpApp({
    logger,
    configure: (a) =>
      mountOperations(a, {
        document,
        handlers: {
          getThing: answer('getThing'),
          deleteThing: answer('deleteThing'),
          replayThings: answer('replayThings'),
          getMyThing: answer('getMyThing'),
          listLinks: answer('listLinks'),
          addLink: answer('addLink'),
          removeLinks: answer('removeLinks'),
          listGroupThings: answer('listGroupThings'),
          getDeepSetting: answer('getDeepSetting'),
        } as never,
        logger,
      }),
  });
  server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise((resolve) => server.close(resolve)));

test('when a literal path lacks the method, then 405 with its Allow, not the parameter path', async () => {
  const replay = await fetch(`${base}/things/replay`);
  expect(replay.status).toBe(405);
  expect(replay.headers.get('allow')).toBe('POST');
  expect(((await replay.json()) as { code: string }).code).toBe('method_not_allowed');
  const me = await fetch(`${base}/things/me`, { method: 'DELETE' });
  expect(me.status).toBe(405);
  expect(me.headers.get('allow')).toBe('GET');
  await me.arrayBuffer();
  expect(seen).toEqual([]);
});

test('when the literal path has the method, then its own handler answers; other ids reach the parameter path', async () => {
  expect((await fetch(`${base}/things/replay`, { method: 'POST' })).status).toBe(204);
  expect((await fetch(`${base}/things/me`)).status).toBe(204);
  expect((await fetch(`${base}/things/thg_1`, { method: 'DELETE' })).status).toBe(204);
  const other = await fetch(`${base}/things/thg_1`, { method: 'PUT' });
  expect(other.status).toBe(405);
  expect(other.headers.get('allow')).toBe('GET, DELETE');
  expect(seen).toEqual(['replayThings', 'getMyThing', 'deleteThing']);
});

test('when a path has several methods among paths of other shapes, then every one of its methods answers', async () => {
  for (const method of ['GET', 'POST', 'DELETE']) {
    expect((await fetch(`${base}/groups/g1/things/t1/links`, { method })).status).toBe(204);
  }
  const put = await fetch(`${base}/groups/g1/things/t1/links`, { method: 'PUT' });
  expect(put.headers.get('allow')).toBe('GET, POST, DELETE');
});
