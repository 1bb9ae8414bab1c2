/**
 * The API reference and the problem code pages on the real services: the hub runs from its build, the
 * Workflow API in-process, both on real databases. Every problem a service answers carries a `type` that,
 * resolved against the request URL, is a page of that service describing the code and its fix.
 */
import { PROBLEM_CODES, hubDocument, workflowDocument } from '@svc/contracts';
import type { OpenApiDocument } from '@svc/contracts';
import { startWorkflowTestStack } from './support/stack';
import type { WorkflowTestStack } from './support/stack';

jest.setTimeout(120_000);

let stack: WorkflowTestStack;
beforeAll(async () => {
  stack = await startWorkflowTestStack();
});
afterAll(() => stack?.close());

interface Problem {
  type: string;
  code: string;
  status: number;
}

/** Calls the service, expects a problem with `code`, and checks its `type` page on the same service. */
async function expectProblemPage(url: string, init: RequestInit, code: string): Promise<void> {
  const res = await fetch(url, init);
  expect(res.headers.get('content-type')).toContain('application/problem+json');
  const problem = (await res.json()) as Problem;
  expect(problem.code).toBe(code);
  expect(problem.type).toBe(`/docs/errors/${code}`);
  const pageUrl = new URL(problem.type, url);
  expect(pageUrl.origin).toBe(new URL(url).origin);
  const page = await fetch(pageUrl);
  expect(page.status).toBe(200);
  const html = await page.text();
  expect(html).toContain(`<h1><code>${code}</code></h1>`);
  expect(html).toContain('How to fix it');
}

const services = (): [string, string, OpenApiDocument][] => [
  ['hub', stack.hubUrl, hubDocument],
  ['workflow', stack.url, workflowDocument],
];

describe('API docs on the running services', () => {
  test('when /docs is read on each service, then it is its own reference with every operation and no outside asset', async () => {
    for (const [, url, document] of services()) {
      const res = await fetch(`${url}/docs`);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toBe('text/html; charset=utf-8');
      expect(res.headers.get('content-security-policy')).toMatch(/default-src 'none'/);
      const html = await res.text();
      expect(html).toContain(document.info.title);
      expect(html).not.toMatch(/<script|<link\b|<img\b|@import|(?:src|href)="(?:https?:)?\/\//i);
      for (const item of Object.values(document.paths ?? {})) {
        for (const op of Object.values(item) as { operationId?: string }[]) {
          if (op?.operationId) expect(html).toContain(`id="op-${op.operationId}"`);
        }
      }
    }
  });

  test('when every registered code page is read on each service, then each answers 200 with the code and its fix', async () => {
    for (const [, url] of services()) {
      for (const doc of PROBLEM_CODES) {
        const res = await fetch(`${url}/docs/errors/${doc.code}`);
        expect(res.status).toBe(200);
        const html = await res.text();
        expect(html).toContain(`<h1><code>${doc.code}</code></h1>`);
        expect(html).toContain('How to fix it');
      }
    }
  });

  test("when the hub answers problems, then each type resolves to that code's page on the hub", async () => {
    await expectProblemPage(`${stack.hubUrl}/api/v1/me`, {}, 'credential_missing');
    await expectProblemPage(
      `${stack.hubUrl}/api/v1/me`,
      { headers: { authorization: 'Bearer not-a-token' } },
      'credential_invalid',
    );
    await expectProblemPage(`${stack.hubUrl}/api/v1/nothing-here`, {}, 'route_not_found');
    await expectProblemPage(
      `${stack.hubUrl}/api/v1/auth/login`,
      { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"email":' },
      'malformed_json',
    );
  });

  test("when the Workflow API answers problems, then each type resolves to that code's page on the Workflow API", async () => {
    const base = `${stack.url}/api/v1/projects/${stack.project.id}/workflow`;
    await expectProblemPage(`${base}/invocations/inv_missing`, {}, 'credential_missing');
    const readKey = await stack.key(['workflows:read']);
    await expectProblemPage(
      `${base}/invocations/inv_01JZZZZZZZZZZZZZZZZZZZZZZZ`,
      { headers: { 'x-api-key': readKey } },
      'invocation_not_found',
    );
    await expectProblemPage(
      `${base}/invocations`,
      {
        method: 'POST',
        headers: { 'x-api-key': readKey, 'content-type': 'application/json' },
        body: JSON.stringify({ intent: 'Summarize the incident report' }),
      },
      'scope_missing',
    );
    const runKey = await stack.key(['workflows:run']);
    await expectProblemPage(
      `${base}/invocations`,
      {
        method: 'POST',
        headers: { 'x-api-key': runKey, 'content-type': 'application/json' },
        body: JSON.stringify({ intent: 'Summarize the incident report' }),
      },
      'idempotency_key_required',
    );
  });
});
