import { hubDocument, PROBLEM_CODES, workflowDocument } from '@svc/contracts';
import type { OpenApiDocument } from '@svc/contracts';
import { mountApiDocs } from './docs';
import { escapeHtml, markdown } from './docs-render';
import { AppError } from './errors';
import { createHttpApp } from './http-app';
import { createLogger } from './logger';
import { startHttpServer } from './server';
import type { RunningServer } from './server';

const METHODS = ['get', 'put', 'post', 'patch', 'delete', 'head', 'options', 'trace'];

async function serve(document: OpenApiDocument): Promise<RunningServer> {
  const app = createHttpApp({
    logger: createLogger({ name: 'docs-test', level: 'silent' }),
    configure(app) {
      app.post('/boom', () => {
        throw new AppError({ status: 409, code: 'launch_blocked', detail: 'blocked' });
      });
      mountApiDocs(app, { document });
    },
  });
  return startHttpServer(app, { host: '127.0.0.1', port: 0 });
}

/** Every `href`/`src`/`url(` of a page: all must stay on the page's own service. */
function references(html: string): string[] {
  return [
    ...html.matchAll(/\b(?:href|src|action|srcset)\s*=\s*"([^"]*)"/gi),
    ...html.matchAll(/url\(([^)]*)\)/gi),
  ].map((m) => m[1]!);
}

function expectSelfContained(html: string, headers: Headers): void {
  expect(html).not.toMatch(/<script|<iframe|<link\b|<img\b|@import|<object|<embed/i);
  for (const ref of references(html)) expect(ref).toMatch(/^(\/(?!\/)|#)/);
  // Every in-page anchor exists.
  for (const ref of references(html).filter((r) => r.startsWith('#')))
    expect(html).toContain(`id="${ref.slice(1)}"`);
  expect(headers.get('content-type')).toBe('text/html; charset=utf-8');
  expect(headers.get('content-security-policy')).toMatch(/default-src 'none'/);
}

describe.each([
  ['hub', hubDocument],
  ['workflow', workflowDocument],
])('API docs of the %s document', (_name, document) => {
  let server: RunningServer;
  beforeAll(async () => {
    server = await serve(document);
  });
  afterAll(() => server.close());

  test('when /docs is read, then it is one self-contained page listing every operation and schema', async () => {
    const res = await fetch(`${server.url}/docs`);
    expect(res.status).toBe(200);
    const html = await res.text();
    expectSelfContained(html, res.headers);
    for (const [path, item] of Object.entries(document.paths ?? {})) {
      for (const method of METHODS) {
        const op = item[method] as { operationId?: string; summary?: string } | undefined;
        if (!op) continue;
        expect(html).toContain(`id="op-${op.operationId}"`);
        expect(html).toContain(`<code>${escapeHtml(path)}</code>`);
      }
    }
    for (const name of Object.keys(document.components?.schemas ?? {}))
      expect(html).toContain(`id="schema-${name}"`);
    expect(html).toContain(escapeHtml(document.info.title));
    for (const code of PROBLEM_CODES) expect(html).toContain(`href="/docs/errors/${code.code}"`);
  });

  test('when every problem code page is read, then each answers 200, names its code and says how to fix it', async () => {
    for (const doc of PROBLEM_CODES) {
      const res = await fetch(`${server.url}/docs/errors/${doc.code}`);
      expect(res.status).toBe(200);
      const html = await res.text();
      expectSelfContained(html, res.headers);
      expect(html).toContain(`<h1><code>${doc.code}</code></h1>`);
      expect(html).toContain('How to fix it');
      expect(html).toContain(markdown(doc.fix));
    }
    const index = await fetch(`${server.url}/docs/errors`);
    expect(index.status).toBe(200);
    const html = await index.text();
    for (const doc of PROBLEM_CODES) expect(html).toContain(`href="/docs/errors/${doc.code}"`);
  });

  test("when a problem is answered, then its type resolved against the request URL is that code's page", async () => {
    for (const request of [
      { url: `${server.url}/no/such/route`, init: {}, code: 'route_not_found' },
      { url: `${server.url}/boom`, init: { method: 'POST' }, code: 'launch_blocked' },
      {
        url: `${server.url}/boom`,
        init: { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{' },
        code: 'malformed_json',
      },
    ]) {
      const res = await fetch(request.url, request.init);
      const problem = (await res.json()) as { type: string; code: string };
      expect(problem.code).toBe(request.code);
      const page = await fetch(new URL(problem.type, request.url));
      expect(page.status).toBe(200);
      expect(await page.text()).toContain(`<h1><code>${request.code}</code></h1>`);
    }
  });

  test('when an unknown code page is asked for, then the answer is the 404 problem', async () => {
    const res = await fetch(`${server.url}/docs/errors/no_such_code`);
    expect(res.status).toBe(404);
    expect(res.headers.get('content-type')).toContain('application/problem+json');
    expect(((await res.json()) as { code: string }).code).toBe('route_not_found');
  });
});

describe('docs links', () => {
  test('when an operation description names a problem code, then the reference links it to the code page', async () => {
    const server = await serve(workflowDocument);
    try {
      const html = await (await fetch(`${server.url}/docs`)).text();
      expect(html).toContain(
        '<a href="/docs/errors/idempotency_key_required"><code>idempotency_key_required</code></a>',
      );
    } finally {
      await server.close();
    }
  });
});

describe('docs markdown', () => {
  test('when a description holds markup and an external link, then it is escaped and the link keeps its text only', () => {
    const html = markdown(
      'Use `x<y>` and **this**; see [the guide](https://example.com/guide) or [here](/docs).',
    );
    expect(html).toBe(
      '<p>Use <code>x&lt;y&gt;</code> and <strong>this</strong>; see the guide or <a href="/docs">here</a>.</p>',
    );
  });
});
