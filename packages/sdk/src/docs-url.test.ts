import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { APIError } from './index';
import { PermissionDeniedError, Workflow } from './index';

let server: Server;
let baseUrl: string;
let type: string;

beforeAll(async () => {
  server = createServer((_req, res) => {
    res.writeHead(403, { 'content-type': 'application/problem+json' });
    res.end(
      JSON.stringify({ type, title: 'Forbidden', status: 403, code: 'scope_missing', request_id: 'req_1' }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

async function failure(): Promise<APIError> {
  const workflow = new Workflow({ baseUrl, apiKey: 'svc_test_key', projectId: 'prj_1', maxRetries: 0 });
  try {
    await workflow.invocations.get('inv_1');
  } catch (error) {
    return error as APIError;
  }
  throw new Error('the call did not fail');
}

describe('APIError.docs_url', () => {
  test("when a problem's type is relative, then docs_url is that page on the service that answered", async () => {
    type = '/docs/errors/scope_missing';
    const error = await failure();
    expect(error).toBeInstanceOf(PermissionDeniedError);
    expect(error.code).toBe('scope_missing');
    expect(error.docs_url).toBe(`${baseUrl}/docs/errors/scope_missing`);
  });

  test('when the type is about:blank, then there is no docs_url', async () => {
    type = 'about:blank';
    expect((await failure()).docs_url).toBeUndefined();
  });

  test('when the type is absolute, then docs_url is it as given', async () => {
    type = 'https://errors.example.com/scope_missing';
    expect((await failure()).docs_url).toBe('https://errors.example.com/scope_missing');
  });
});
