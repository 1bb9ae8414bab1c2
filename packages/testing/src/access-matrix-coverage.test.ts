import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import * as contracts from '@svc/contracts';
import type { OpenApiDocument } from '@svc/contracts';
import {
  createMatrixCoverage,
  declaredOperations,
  MATRIX_SUITES,
  NOT_SERVED_DOCUMENTS,
} from './access-matrix-coverage';
import { generateAccessMatrix, operationLabel, readOperations } from './access-matrix';

const ROOT = path.resolve(__dirname, '../../..');
const OPENAPI_DIR = path.join(ROOT, 'packages/contracts/openapi');

describe('every contract document has its matrix run', () => {
  const served = readdirSync(OPENAPI_DIR)
    .filter((name) => name.endsWith('.yaml') && !NOT_SERVED_DOCUMENTS.includes(name))
    .sort();

  test('when the contract directory is listed, then each document a service serves has a matrix suite', () => {
    expect(served.length).toBeGreaterThan(0);
    expect(Object.keys(MATRIX_SUITES).sort()).toEqual(served);
  });

  test.each(Object.entries(MATRIX_SUITES))(
    'when %s is read, then its test file generates its matrix and asserts the coverage of the whole document',
    (_file, suite) => {
      const doc = (contracts as unknown as Record<string, OpenApiDocument | undefined>)[suite.document];
      expect(doc?.paths).toBeDefined();
      const testFile = path.join(ROOT, suite.testFile);
      expect(existsSync(testFile)).toBe(true);
      const text = readFileSync(testFile, 'utf8');
      expect(text).toMatch(new RegExp(`generateAccessMatrix\\(\\s*${suite.document}\\b`));
      expect(text).toMatch(new RegExp(`createMatrixCoverage\\(\\s*${suite.document}\\b`));
      expect(text).toMatch(/\.missing\(\)\]?\)\.toEqual\(\[\]\)/);
      // Every operation the raw document declares is read by the router's reader, which the matrix uses.
      expect(readOperations(doc!).map(operationLabel).sort()).toEqual(declaredOperations(doc!).sort());
    },
  );
});

describe('matrix coverage', () => {
  const doc: OpenApiDocument = {
    openapi: '3.1.0',
    info: { title: 'Small', version: '1' },
    paths: {
      '/healthz': {
        get: {
          operationId: 'live',
          'x-svc-actors': ['anonymous'],
          'x-svc-scopes': [],
          responses: { 200: {} },
        },
      },
      '/things': {
        get: {
          operationId: 'listThings',
          'x-svc-actors': ['participant'],
          'x-svc-scopes': [],
          responses: { 200: {}, 401: {}, 403: {} },
        },
      },
    },
  };

  test('when the raw document is read, then every method of every path is listed', () => {
    expect(declaredOperations(doc)).toEqual(['GET /healthz (live)', 'GET /things (listThings)']);
  });

  test('when cases did not answer as expected, then coverage names them; when all did, it is empty', () => {
    const matrix = generateAccessMatrix(doc);
    const coverage = createMatrixCoverage(doc, matrix);
    expect(coverage.missing()).toHaveLength(matrix.cases.length);
    for (const c of matrix.cases.slice(1)) coverage.record(c.id);
    expect(coverage.missing()).toEqual([
      `Small: ${matrix.cases[0]!.id} did not answer as expected (or did not run)`,
    ]);
    coverage.record(matrix.cases[0]!.id);
    expect(coverage.missing()).toEqual([]);
  });

  test('when the document gains an operation the matrix has no case for, then coverage names it', () => {
    const matrix = generateAccessMatrix(doc);
    const grown: OpenApiDocument = {
      ...doc,
      paths: {
        ...doc.paths,
        '/things/{id}': {
          delete: {
            operationId: 'dropThing',
            'x-svc-actors': ['participant'],
            'x-svc-scopes': [],
            responses: {},
          },
        },
      },
    };
    const coverage = createMatrixCoverage(grown, matrix);
    for (const c of matrix.cases) coverage.record(c.id);
    expect(coverage.missing()).toEqual(['Small: DELETE /things/{id} (dropThing) has no case in the matrix']);
  });
});
