import {
  assertCredentialFactories,
  assertDeviations,
  casesByOperation,
  generateAccessMatrix,
  missingCredentialFactories,
  nonEmpty,
  readOperations,
  RESOURCE_NOT_FOUND,
} from './access-matrix';
import type { MatrixDocument } from './access-matrix';

const problem = { description: 'Error.' };
const documented = { '200': { description: 'OK.' }, '401': problem, '403': problem, '404': problem };

const doc: MatrixDocument = {
  openapi: '3.1.0',
  info: { title: 'Small', version: '1' },
  components: {
    parameters: { Workspace: { name: 'workspace', in: 'path', required: true, schema: { type: 'string' } } },
  },
  paths: {
    '/healthz': {
      get: { operationId: 'live', 'x-svc-actors': ['anonymous'], 'x-svc-scopes': [], responses: {} },
    },
    '/workspaces/{workspace}/things': {
      parameters: [{ $ref: '#/components/parameters/Workspace' }],
      get: {
        operationId: 'listThings',
        'x-svc-actors': ['participant', 'api_key'],
        'x-svc-scopes': ['things:read'],
        responses: documented,
      },
    },
    '/things/{thingId}': {
      post: {
        operationId: 'touchThing',
        parameters: [{ name: 'thingId', in: 'path', required: true }],
        'x-svc-actors': ['agent'],
        'x-svc-scopes': ['things:write'],
        responses: documented,
      },
    },
    '/internal/ping': {
      get: { operationId: 'ping', 'x-svc-actors': ['service'], 'x-svc-scopes': [], responses: documented },
    },
  },
};

const summary = (cases: ReturnType<typeof generateAccessMatrix>['cases']) =>
  cases.map((c) => `${c.id} → ${c.expected.status} ${c.expected.code}`);

describe('access matrix generation', () => {
  test('when a document is read, then path-level and referenced path parameters are found', () => {
    expect(readOperations(doc).map((op) => [op.operationId, op.pathParams])).toEqual([
      ['live', []],
      ['listThings', ['workspace']],
      ['touchThing', ['thingId']],
      ['ping', []],
    ]);
  });

  test('when an operation lacks its annotations, then reading the document throws', () => {
    const bad = {
      openapi: '3.1.0',
      info: { title: 'Bad', version: '1' },
      paths: { '/x': { get: { operationId: 'x', responses: {} } } },
    };
    expect(() => readOperations(bad)).toThrow(
      'GET /x: operationId, x-svc-actors and x-svc-scopes are required',
    );
  });

  test('when the matrix is generated, then every protected operation gets the unauthorized trio', () => {
    const matrix = generateAccessMatrix(doc);
    expect(matrix.anonymous.map((op) => op.operationId)).toEqual(['live']);
    expect(summary(matrix.cases)).toEqual([
      'listThings no_credential → 401 credential_missing',
      'listThings wrong_actor agent → 403 actor_not_allowed',
      'listThings wrong_actor service → 403 actor_not_allowed',
      'listThings wrong_actor relay_token → 403 actor_not_allowed',
      'listThings scope_missing things:read → 403 scope_missing',
      'listThings other_workspace participant → 403 workspace_forbidden',
      'listThings other_workspace api_key → 403 workspace_forbidden',
      'touchThing no_credential → 401 credential_missing',
      'touchThing wrong_actor participant → 403 actor_not_allowed',
      'touchThing wrong_actor api_key → 403 actor_not_allowed',
      'touchThing wrong_actor service → 403 actor_not_allowed',
      'touchThing wrong_actor relay_token → 403 actor_not_allowed',
      `touchThing other_workspace agent → 404 ${RESOURCE_NOT_FOUND}`,
      'ping no_credential → 401 credential_missing',
      'ping wrong_actor participant → 403 actor_not_allowed',
      'ping wrong_actor api_key → 403 actor_not_allowed',
      'ping wrong_actor agent → 403 actor_not_allowed',
      'ping wrong_actor relay_token → 403 actor_not_allowed',
    ]);
    expect(casesByOperation(matrix).map(([name, cases]) => [name, cases.length])).toEqual([
      ['GET /workspaces/{workspace}/things (listThings)', 7],
      ['POST /things/{thingId} (touchThing)', 6],
      ['GET /internal/ping (ping)', 5],
    ]);
  });

  test('when the service does not read a credential kind, then that wrong actor expects 401 credential_invalid', () => {
    const matrix = generateAccessMatrix(doc, { unreadCredentials: ['relay_token'] });
    expect(summary(matrix.cases.filter((c) => c.actor === 'relay_token'))).toEqual([
      'listThings wrong_actor relay_token → 401 credential_invalid',
      'touchThing wrong_actor relay_token → 401 credential_invalid',
      'ping wrong_actor relay_token → 401 credential_invalid',
    ]);
  });

  test('when the document does not list an answer the matrix expects, then generation throws', () => {
    const undocumented: MatrixDocument = {
      openapi: '3.1.0',
      info: { title: 'Undocumented', version: '1' },
      paths: {
        '/things/{thingId}': {
          get: {
            operationId: 'getThing',
            parameters: [{ name: 'thingId', in: 'path' }],
            'x-svc-actors': ['api_key'],
            'x-svc-scopes': [],
            responses: { '200': {}, '401': {}, '403': {} },
          },
        },
      },
    };
    expect(() => generateAccessMatrix(undocumented)).toThrow('the document lists no 404');
  });

  test('when an operation names an unknown actor kind, then generation throws', () => {
    const unknown: MatrixDocument = {
      openapi: '3.1.0',
      info: { title: 'Unknown', version: '1' },
      paths: {
        '/x': { get: { operationId: 'x', 'x-svc-actors': ['robot'], 'x-svc-scopes': [], responses: {} } },
      },
    };
    expect(() => generateAccessMatrix(unknown)).toThrow("unknown actor kind 'robot'");
  });
});

describe('access matrix guards', () => {
  test('when a generated list is empty, then it throws instead of passing silently', () => {
    const onlyAnonymous = generateAccessMatrix({
      openapi: '3.1.0',
      info: { title: 'Probes', version: '1' },
      paths: { '/healthz': doc.paths!['/healthz']! },
    });
    expect(onlyAnonymous.cases).toEqual([]);
    expect(() => casesByOperation(onlyAnonymous)).toThrow(
      'the generated list of protected operations of Probes is empty',
    );
    expect(() => nonEmpty([], 'things')).toThrow('the generated list of things is empty');
    expect(nonEmpty([1], 'things')).toEqual([1]);
  });

  test('when the matrix needs a credential kind the test cannot make, then it names the kind', () => {
    const matrix = generateAccessMatrix(doc);
    const factories = { participant: () => 't', api_key: () => 'k', agent: () => 'a', service: () => 's' };
    expect(missingCredentialFactories(matrix, factories)).toEqual(['relay_token']);
    expect(() => assertCredentialFactories(matrix, factories)).toThrow(
      'Small: the matrix needs credentials of relay_token but the test has no factory for them',
    );
    expect(() => assertCredentialFactories(matrix, { ...factories, relay_token: () => 'r' })).not.toThrow();
  });

  test('when a deviation names no case or repeats the contract answer, then the list is refused', () => {
    const matrix = generateAccessMatrix(doc);
    const reason = 'because';
    expect(() =>
      assertDeviations(matrix, { 'ping no_credential': { actual: { status: 500, code: 'boom' }, reason } }),
    ).not.toThrow();
    expect(() =>
      assertDeviations(matrix, { 'nope no_credential': { actual: { status: 500, code: 'boom' }, reason } }),
    ).toThrow('nope no_credential: no such case');
    expect(() =>
      assertDeviations(matrix, {
        'ping no_credential': { actual: { status: 401, code: 'credential_missing' }, reason },
      }),
    ).toThrow("ping no_credential: the listed answer is the contract's own");
  });
});
