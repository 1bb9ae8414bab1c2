import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import type { OpenApiDocument } from '@svc/contracts';
import { createHttpApp } from './http-app';
import { createLogger } from './logger';
import { mountOperations } from './operation-router';
import type { OperationHandlers } from './operation-router';
import { findInvalidText, isStorableText } from './text-check';

const document: OpenApiDocument = {
  openapi: '3.1.0',
  info: { title: 'Text test', version: '1' },
  paths: {
    '/notes/{noteId}': {
      parameters: [{ name: 'noteId', in: 'path', required: true, schema: { type: 'string' } }],
      put: {
        operationId: 'putNote',
        'x-svc-actors': ['anonymous'],
        'x-svc-scopes': [],
        parameters: [
          { name: 'tag', in: 'query', schema: { type: 'string' } },
          { name: 'X-Note-Source', in: 'header', schema: { type: 'string' } },
        ],
        requestBody: {
          required: true,
          content: {
            'application/json': {
              schema: {
                type: 'object',
                properties: {
                  title: { type: 'string', enum: ['a', 'b'] },
                  labels: { type: 'object', additionalProperties: { type: 'string' } },
                  lines: { type: 'array', items: { type: 'string' } },
                },
              },
            },
          },
        },
        responses: { '200': { description: 'stored' } },
      },
    },
  },
};

type Ops = {
  putNote: {
    parameters: { path: { noteId: string }; query?: { tag?: string } };
    requestBody: { content: { 'application/json': Record<string, unknown> } };
    responses: { 200: { content: { 'application/json': unknown } } };
  };
};

let server: Server;
let base: string;
const stored: unknown[] = [];

beforeAll(async () => {
  const logger = createLogger({ name: 'text-test', level: 'silent' });
  const handlers: OperationHandlers<Ops> = {
    putNote: ({ params, query, body }) => {
      stored.push({ params, query, body });
      return { status: 200, body: { ok: true } };
    },
  };
  const app = createHttpApp({
    logger,
    configure: (a) => mountOperations(a, { document, handlers, logger }),
  });
  server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => new Promise((resolve) => server.close(resolve)));

async function put(path: string, body: string | Buffer, headers: Record<string, string> = {}) {
  const res = await fetch(`${base}${path}`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json', ...headers },
    body,
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined };
}

describe('text rule', () => {
  test('when text is NUL-free and well formed, then it is storable, control characters included', () => {
    expect(isStorableText('plain \t\n\r \u0001\u001b[31m\u007f\u0085 😀')).toBe(true);
    expect(isStorableText('a\u0000b')).toBe(false);
    expect(isStorableText('\uD800')).toBe(false);
    expect(isStorableText('x\uDC00')).toBe(false);
    expect(isStorableText('\uDC00\uD800')).toBe(false);
    expect(isStorableText('\uD83D\uDE00')).toBe(true);
  });

  test('when keys and values at any depth hold bad text, then each is named with its location', () => {
    const errors = findInvalidText(
      { ok: 'x', deep: [{ 'a/b\u0000': 'fine', n: '\uD800' }], 'k~\uDC00': 1 },
      'body',
    );
    expect(errors.map((e) => e.location)).toEqual([
      'body/deep/0/a~1b\\u0000',
      'body/deep/0/n',
      'body/k~0\\udc00',
    ]);
  });
});

describe('operation router: text_invalid', () => {
  const cases: [string, string, string][] = [
    ['a NUL in a body value', JSON.stringify({ lines: ['ok', 'a\u0000b'] }), 'body/lines/1'],
    ['a lone high surrogate in a body value', '{"labels":{"k":"\\ud800"}}', 'body/labels/k'],
    ['a lone low surrogate in a body value', '{"lines":["\\udc00x"]}', 'body/lines/0'],
    ['a NUL in an object key', '{"labels":{"k\\u0000":"v"}}', 'body/labels/k\\u0000'],
    ['a lone surrogate in an object key', '{"labels":{"\\ud800":"v"}}', 'body/labels/\\ud800'],
    ['a NUL in a field that the schema would refuse anyway', '{"title":"\\u0000"}', 'body/title'],
  ];
  test.each(cases)('when the body has %s, then 400 text_invalid names the field', async (_n, body, at) => {
    const before = stored.length;
    const res = await put('/notes/n1', body);
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('text_invalid');
    expect(res.body.errors).toContainEqual({ location: at, message: expect.any(String) });
    expect(stored.length).toBe(before);
  });

  test('when a path parameter holds a NUL, then 400 text_invalid at path/noteId', async () => {
    const res = await put('/notes/a%00b', '{}');
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'text_invalid', errors: [{ location: 'path/noteId' }] });
  });

  test('when a path parameter is not UTF-8 once decoded, then 400 text_invalid, not 500', async () => {
    const res = await put('/notes/%ED%A0%80', '{}');
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('text_invalid');
  });

  test('when a query parameter holds a NUL, then 400 text_invalid at query/tag', async () => {
    const res = await put('/notes/n1?tag=a%00', '{}');
    expect(res.status).toBe(400);
    expect(res.body).toMatchObject({ code: 'text_invalid', errors: [{ location: 'query/tag' }] });
  });

  test('when control characters other than NUL are sent, then they are accepted and passed on as sent', async () => {
    const text = 'bell\u0007 esc\u001b[0m del\u007f c1\u0085 tab\t';
    const res = await put(
      `/notes/n\u0001?tag=${encodeURIComponent(text)}`,
      JSON.stringify({ lines: [text] }),
      {
        'x-note-source': 'tab\tok',
      },
    );
    expect(res.status).toBe(200);
    expect(stored.at(-1)).toEqual({
      params: { noteId: 'n\u0001' },
      query: { tag: text },
      body: { lines: [text] },
    });
  });
});

describe('compressed bodies', () => {
  test.each([
    ['gzip', Buffer.from('not gzip at all')],
    ['gzip', gzipSync(Buffer.from('{"lines":["a"]}')).subarray(0, 12)],
    ['br', Buffer.from([0xff, 0xff, 0xff, 0x00, 0x12])],
    ['deflate', Buffer.from('garbage')],
  ])('when a %s body does not decode, then 400 body_encoding_invalid', async (encoding, body) => {
    const res = await put('/notes/n1', body, { 'content-encoding': encoding });
    expect(res.status).toBe(400);
    expect(res.body.code).toBe('body_encoding_invalid');
    expect(res.body.code).toMatch(/^[a-z][a-z0-9_]*$/);
  });

  test('when a br body decodes, then it is read as usual', async () => {
    const res = await put('/notes/n1', brotliCompressSync(Buffer.from('{"lines":["a"]}')), {
      'content-encoding': 'br',
    });
    expect(res.status).toBe(200);
  });
});
