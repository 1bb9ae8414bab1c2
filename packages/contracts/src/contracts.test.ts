import {
  consoleRouterDocument,
  agentConsoleDocument,
  hubDocument,
  hubInternalDocument,
  relayDocument,
  runtimeControlDocument,
  workflowDocument,
  workflowWorkerDocument,
} from './index';

// eslint-disable-next-line @typescript-eslint/no-require-imports
const { lintAnnotations } = require('../scripts/documents.cjs') as {
  lintAnnotations: (docs: Record<string, unknown>) => string[];
};

const documents = {
  hub: hubDocument,
  hubInternal: hubInternalDocument,
  workflow: workflowDocument,
  workflowWorker: workflowWorkerDocument,
  relay: relayDocument,
  consoleRouter: consoleRouterDocument,
  agentConsole: agentConsoleDocument,
  runtimeControl: runtimeControlDocument,
};

function withOperation(op: Record<string, unknown>, path = '/api/v1/example') {
  const hub = structuredClone(hubDocument);
  hub.paths = { ...hub.paths, [path]: { get: op } };
  return { ...documents, hub };
}

describe('contract documents', () => {
  test('when the committed documents are linted, then every operation carries id, actors and scopes', () => {
    expect(lintAnnotations(documents)).toEqual([]);
  });

  test('when every document is inspected, then it is OpenAPI 3.1 with the shared Problem schema', () => {
    for (const doc of Object.values(documents)) {
      expect(doc.openapi).toMatch(/^3\.1\./);
      expect(doc.components?.schemas?.Problem).toBeDefined();
    }
  });

  test('when an operation lacks x-svc-actors, then the lint names it', () => {
    const problems = lintAnnotations(withOperation({ operationId: 'x', 'x-svc-scopes': [], responses: {} }));
    expect(problems).toEqual([expect.stringContaining('GET /api/v1/example: x-svc-actors missing')]);
  });

  test('when an operation lacks x-svc-scopes, then the lint names it', () => {
    const problems = lintAnnotations(
      withOperation({ operationId: 'x', 'x-svc-actors': ['participant'], responses: {} }),
    );
    expect(problems).toEqual([expect.stringContaining('x-svc-scopes missing')]);
  });

  test('when an api_key operation declares no scope, then the lint refuses it', () => {
    const problems = lintAnnotations(
      withOperation({ operationId: 'x', 'x-svc-actors': ['api_key'], 'x-svc-scopes': [], responses: {} }),
    );
    expect(problems).toEqual([expect.stringContaining('need at least one scope')]);
  });

  test('when an operation id is reused, then the lint reports the first use', () => {
    const problems = lintAnnotations(
      withOperation({
        operationId: 'getMe',
        'x-svc-actors': ['participant'],
        'x-svc-scopes': [],
        responses: {},
      }),
    );
    expect(problems).toEqual([expect.stringContaining('operationId getMe already used')]);
  });

  test('when a public document holds an internal path, then the lint refuses it', () => {
    const problems = lintAnnotations(
      withOperation(
        { operationId: 'leak', 'x-svc-actors': ['service'], 'x-svc-scopes': [], responses: {} },
        '/internal/v1/leak',
      ),
    );
    expect(problems).toEqual([expect.stringContaining('internal paths belong in an internal document')]);
  });

  test('when an unknown actor or malformed scope is declared, then the lint reports both', () => {
    const problems = lintAnnotations(
      withOperation({
        operationId: 'x',
        'x-svc-actors': ['robot'],
        'x-svc-scopes': ['Everything'],
        responses: {},
      }),
    );
    expect(problems).toEqual(
      expect.arrayContaining([
        expect.stringContaining('unknown actor robot'),
        expect.stringContaining('malformed scope'),
      ]),
    );
  });
});
