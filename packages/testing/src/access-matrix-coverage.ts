import type { OpenApiDocument } from '@svc/contracts';

/**
 * Proof that a matrix run covered its document: every operation the document declares (read here from the raw
 * `paths`, independently of the router's reader) has cases, and every case answered as expected. A test file
 * ends with `expect(coverage.missing()).toEqual([])`, so an operation added to a document that the run did not
 * prove fails the file.
 */

const METHODS = ['get', 'put', 'post', 'delete', 'patch', 'head', 'options', 'trace'] as const;

/** `METHOD /path (operationId)` of every operation the document's `paths` declare, from the raw document. */
export function declaredOperations(doc: OpenApiDocument): string[] {
  const paths = (doc.paths ?? {}) as Record<string, Record<string, { operationId?: unknown } | undefined>>;
  return Object.entries(paths).flatMap(([path, item]) =>
    METHODS.filter((m) => item?.[m] !== undefined).map(
      (m) => `${m.toUpperCase()} ${path} (${String(item?.[m]?.operationId ?? '?')})`,
    ),
  );
}

interface CoveredMatrix {
  title: string;
  cases: { id: string; operation: { operationId: string; method: string; path: string } }[];
}

export interface MatrixCoverage {
  record(caseId: string): void;
  /**
   * What the run has not proven, one line each: an operation of the document with no case, a case that did
   * not answer as expected (or did not run). Empty when the run covered the whole document.
   */
  missing(): string[];
}

/** Coverage of one matrix over its document; pass it as the target's `coverage`. */
export function createMatrixCoverage(doc: OpenApiDocument, matrix: CoveredMatrix): MatrixCoverage {
  const passed = new Set<string>();
  return {
    record(caseId) {
      passed.add(caseId);
    },
    missing() {
      const withCases = new Set(
        matrix.cases.map(
          (c) => `${c.operation.method.toUpperCase()} ${c.operation.path} (${c.operation.operationId})`,
        ),
      );
      return [
        ...declaredOperations(doc)
          .filter((op) => !withCases.has(op))
          .map((op) => `${matrix.title}: ${op} has no case in the matrix`),
        ...matrix.cases
          .filter((c) => !passed.has(c.id))
          .map((c) => `${matrix.title}: ${c.id} did not answer as expected (or did not run)`),
      ];
    },
  };
}

/**
 * Which test runs the matrix of each contract document of `packages/contracts/openapi/` (file name → the
 * `@svc/contracts` export and the test file, relative to the repository root). A document missing here fails
 * `access-matrix-coverage.test.ts`; each test file must generate the matrix of its document and assert its
 * coverage.
 */
export const MATRIX_SUITES: Record<string, { document: string; testFile: string }> = {
  'hub.yaml': { document: 'hubDocument', testFile: 'apps/hub-api/test/access-matrix.test.ts' },
  'hub-internal.yaml': {
    document: 'hubInternalDocument',
    testFile: 'apps/hub-api/test/access-matrix.test.ts',
  },
  'workflow.yaml': { document: 'workflowDocument', testFile: 'apps/workflow-api/test/access-matrix.test.ts' },
  'workflow-worker.yaml': {
    document: 'workflowWorkerDocument',
    testFile: 'apps/workflow-api/test/access-matrix-worker.test.ts',
  },
  'relay.yaml': { document: 'relayDocument', testFile: 'apps/relay/test/access-matrix.test.ts' },
  'console-router.yaml': {
    document: 'consoleRouterDocument',
    testFile: 'apps/console-router/test/access-matrix.test.ts',
  },
  'agent-console.yaml': {
    document: 'agentConsoleDocument',
    testFile: 'packages/agent-console/test/access-matrix.test.ts',
  },
  'runtime-control.yaml': {
    document: 'runtimeControlDocument',
    testFile: 'apps/svc-cli/test/access-matrix.test.ts',
  },
};

/** Files of `packages/contracts/openapi/` that are shared parts, not documents a service serves. */
export const NOT_SERVED_DOCUMENTS = ['shared.yaml'];
