import {
  ANSWERED,
  assertCredentialFactories,
  assertDeviations,
  casesByOperation,
  generateAccessMatrix,
  missingCredentialFactories,
  MATRIX_CREDENTIAL_KINDS,
  nonEmpty,
  pathOf,
  readOperations,
  RESOURCE_NOT_FOUND,
  SAMPLE_ID,
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
      get: {
        operationId: 'live',
        'x-svc-actors': ['anonymous'],
        'x-svc-scopes': [],
        responses: { '200': { description: 'OK.' } },
      },
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

  test('when the matrix is generated, then every protected operation gets its refusals for every credential kind', () => {
    const matrix = generateAccessMatrix(doc);
    expect(matrix.anonymous.map((op) => op.operationId)).toEqual(['live']);
    const notForged = matrix.cases.filter((c) => !c.forged);
    expect(summary(notForged)).toEqual([
      `live anonymous → 0 ${ANSWERED.code}`,
      'listThings no_credential → 401 credential_missing',
      'listThings wrong_actor agent → 403 actor_not_allowed',
      'listThings wrong_actor service → 403 actor_not_allowed',
      'listThings wrong_actor relay_token → 403 actor_not_allowed',
      'listThings wrong_token console_ticket → 401 credential_invalid',
      'listThings wrong_token runtime_credential → 401 credential_invalid',
      'listThings scope_missing things:read → 403 scope_missing',
      'listThings other_workspace participant → 403 workspace_forbidden',
      'listThings other_workspace api_key → 403 workspace_forbidden',
      'touchThing no_credential → 401 credential_missing',
      'touchThing wrong_actor participant → 403 actor_not_allowed',
      'touchThing wrong_actor api_key → 403 actor_not_allowed',
      'touchThing wrong_actor service → 403 actor_not_allowed',
      'touchThing wrong_actor relay_token → 403 actor_not_allowed',
      'touchThing wrong_token console_ticket → 401 credential_invalid',
      'touchThing wrong_token runtime_credential → 401 credential_invalid',
      `touchThing other_workspace agent → 404 ${RESOURCE_NOT_FOUND}`,
      'ping no_credential → 401 credential_missing',
      'ping wrong_actor participant → 403 actor_not_allowed',
      'ping wrong_actor api_key → 403 actor_not_allowed',
      'ping wrong_actor agent → 403 actor_not_allowed',
      'ping wrong_actor relay_token → 403 actor_not_allowed',
      'ping wrong_token console_ticket → 401 credential_invalid',
      'ping wrong_token runtime_credential → 401 credential_invalid',
    ]);
    // Every operation meets a forged credential of every kind: refused where credentials are read, not read
    // (answered as documented) on an anonymous operation.
    for (const op of matrix.operations) {
      const forged = matrix.cases.filter((c) => c.forged && c.operation === op);
      expect(forged.map((c) => c.actor)).toEqual([...MATRIX_CREDENTIAL_KINDS]);
      expect(new Set(forged.map((c) => c.expected))).toEqual(
        new Set([op.operationId === 'live' ? ANSWERED : { status: 401, code: 'credential_invalid' }]),
      );
    }
    expect(casesByOperation(matrix).map(([name, cases]) => [name, cases.length])).toEqual([
      ['GET /healthz (live)', 8],
      ['GET /workspaces/{workspace}/things (listThings)', 16],
      ['POST /things/{thingId} (touchThing)', 15],
      ['GET /internal/ping (ping)', 14],
    ]);
  });

  test('when a path names a resource inside another, then each inner id of another workspace expects 404', () => {
    const nested: MatrixDocument = {
      openapi: '3.1.0',
      info: { title: 'Nested', version: '1' },
      paths: {
        '/teams/{teamId}/agents/{agentId}': {
          put: {
            operationId: 'addAgent',
            parameters: [
              { name: 'teamId', in: 'path', required: true },
              { name: 'agentId', in: 'path', required: true },
            ],
            'x-svc-actors': ['participant'],
            'x-svc-scopes': [],
            responses: documented,
          },
        },
        '/workspaces/{workspace}/providers/{provider}/keys/{keyId}': {
          get: {
            operationId: 'getKey',
            parameters: ['workspace', 'provider', 'keyId'].map((name) => ({
              name,
              in: 'path',
              required: true,
            })),
            'x-svc-actors': ['api_key'],
            'x-svc-scopes': [],
            responses: documented,
          },
        },
      },
    };
    const matrix = generateAccessMatrix(nested, { nameParams: ['provider'] });
    expect(summary(matrix.cases.filter((c) => c.foreign.length > 0))).toEqual([
      `addAgent other_workspace participant → 404 ${RESOURCE_NOT_FOUND}`,
      `addAgent foreign_id participant agentId → 404 ${RESOURCE_NOT_FOUND}`,
      'getKey other_workspace api_key → 403 workspace_forbidden',
      `getKey foreign_id api_key keyId → 404 ${RESOURCE_NOT_FOUND}`,
    ]);
    const target = {
      params: () => ({ teamId: 'team_home' }),
      foreignParams: () => ({ agentId: 'agt_far', teamId: 'team_far' }),
    };
    const byId = (id: string) => matrix.cases.find((c) => c.id === id)!;
    expect(pathOf(byId('addAgent foreign_id participant agentId'), target)).toBe(
      '/teams/team_home/agents/agt_far',
    );
    expect(pathOf(byId('addAgent other_workspace participant'), target)).toBe(
      `/teams/team_far/agents/${SAMPLE_ID}`,
    );
    // The rest of a foreign_id path must be the callers' own resources, or a 404 would prove nothing.
    expect(() =>
      pathOf(byId('addAgent foreign_id participant agentId'), { ...target, params: () => ({}) }),
    ).toThrow("no resource of the callers' workspace for {teamId}");
  });

  test('when an anonymous operation guards a credential itself, then its own codes are expected', () => {
    const guarded: MatrixDocument = {
      openapi: '3.1.0',
      info: { title: 'Guarded', version: '1' },
      paths: {
        '/spawn': {
          post: {
            operationId: 'spawn',
            'x-svc-actors': ['anonymous'],
            'x-svc-scopes': [],
            responses: { '200': {}, '400': {}, '401': {}, '403': {} },
          },
        },
      },
    };
    const matrix = generateAccessMatrix(guarded, {
      selfGuarded: {
        spawn: {
          credential: 'relay_token',
          missing: { status: 401, code: 'relay_token_missing' },
          invalid: { status: 403, code: 'relay_token_invalid' },
        },
      },
    });
    expect(summary(matrix.cases)).toEqual([
      'spawn no_credential → 401 relay_token_missing',
      'spawn forged participant → 401 relay_token_missing',
      'spawn forged api_key → 401 relay_token_missing',
      'spawn forged agent → 401 relay_token_missing',
      'spawn forged service → 401 relay_token_missing',
      'spawn forged relay_token → 403 relay_token_invalid',
      'spawn forged console_ticket → 401 relay_token_missing',
      'spawn forged runtime_credential → 401 relay_token_missing',
      `spawn own_credential relay_token → 0 ${ANSWERED.code}`,
    ]);
    expect(() =>
      generateAccessMatrix(guarded, { selfGuarded: { nope: matrix.cases[0]!.expected as never } }),
    ).toThrow("selfGuarded names 'nope', which is no anonymous operation of the document");
  });

  test('when a service reads console tickets as participants, then a ticket is refused only where participants are', () => {
    const matrix = generateAccessMatrix(doc, {
      tokenActors: { console_ticket: 'participant' },
      unreadCredentials: ['runtime_credential'],
    });
    expect(summary(matrix.cases.filter((c) => c.check === 'wrong_token'))).toEqual([
      'listThings wrong_token runtime_credential → 401 credential_invalid',
      'touchThing wrong_token console_ticket → 403 actor_not_allowed',
      'touchThing wrong_token runtime_credential → 401 credential_invalid',
      'ping wrong_token console_ticket → 403 actor_not_allowed',
      'ping wrong_token runtime_credential → 401 credential_invalid',
    ]);
  });

  test('when the service does not read a credential kind, then that wrong actor expects 401 credential_invalid', () => {
    const matrix = generateAccessMatrix(doc, { unreadCredentials: ['relay_token'] });
    expect(summary(matrix.cases.filter((c) => c.actor === 'relay_token' && !c.forged))).toEqual([
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

describe('role cases', () => {
  const withRoles: MatrixDocument = {
    ...doc,
    paths: {
      '/workspaces/{workspace}/things/{thingId}': {
        parameters: [
          { $ref: '#/components/parameters/Workspace' },
          { name: 'thingId', in: 'path', required: true },
        ],
        delete: {
          operationId: 'deleteThing',
          'x-svc-actors': ['participant', 'api_key'],
          'x-svc-scopes': ['things:write'],
          'x-svc-participant-roles': ['owner', 'admin'],
          responses: documented,
        },
        patch: {
          operationId: 'approveThing',
          'x-svc-actors': ['participant'],
          'x-svc-scopes': [],
          'x-svc-participant-roles': ['owner'],
          responses: documented,
        },
        get: {
          operationId: 'getThing',
          'x-svc-actors': ['participant'],
          'x-svc-scopes': [],
          responses: documented,
        },
      },
    },
  };

  test('when role cases are asked for, then each role an operation leaves out is refused with its code', () => {
    const matrix = generateAccessMatrix(withRoles, {
      roleCases: true,
      roleCodes: { approveThing: 'approval_role_required' },
    });
    expect(summary(matrix.cases.filter((c) => c.check === 'role_missing'))).toEqual([
      'deleteThing role_missing member → 403 role_forbidden',
      'deleteThing role_missing viewer → 403 role_forbidden',
      'approveThing role_missing admin → 403 approval_role_required',
      'approveThing role_missing member → 403 approval_role_required',
      'approveThing role_missing viewer → 403 approval_role_required',
    ]);
    expect(generateAccessMatrix(withRoles).cases.filter((c) => c.check === 'role_missing')).toEqual([]);
  });

  test('when role cases exist and no factory makes a participant in a role, then it is named', () => {
    const matrix = generateAccessMatrix(withRoles, { roleCases: true });
    const factories = Object.fromEntries(MATRIX_CREDENTIAL_KINDS.map((kind) => [kind, () => kind]));
    expect(missingCredentialFactories(matrix, factories)).toEqual(['participant_role']);
    expect(missingCredentialFactories(matrix, { ...factories, participant_role: () => 'r' })).toEqual([]);
  });
});

describe('access matrix guards', () => {
  test('when a generated list is empty, then it throws instead of passing silently', () => {
    const onlyAnonymous = generateAccessMatrix({
      openapi: '3.1.0',
      info: { title: 'Probes', version: '1' },
      paths: { '/healthz': doc.paths!['/healthz']! },
    });
    expect(onlyAnonymous.protected).toEqual([]);
    expect(onlyAnonymous.cases.every((c) => c.check === 'anonymous')).toBe(true);
    const empty = generateAccessMatrix({
      openapi: '3.1.0',
      info: { title: 'Empty', version: '1' },
      paths: {},
    });
    expect(() => casesByOperation(empty)).toThrow('the generated list of operations of Empty is empty');
    expect(() => nonEmpty([], 'things')).toThrow('the generated list of things is empty');
    expect(nonEmpty([1], 'things')).toEqual([1]);
  });

  test('when the matrix needs a credential kind the test cannot make, then it names the kind', () => {
    const matrix = generateAccessMatrix(doc);
    const factories = { participant: () => 't', api_key: () => 'k', agent: () => 'a', service: () => 's' };
    expect(missingCredentialFactories(matrix, factories)).toEqual([
      'relay_token',
      'console_ticket',
      'runtime_credential',
    ]);
    expect(() => assertCredentialFactories(matrix, factories)).toThrow(
      'Small: the matrix needs credentials of relay_token, console_ticket, runtime_credential but the test has no factory for them',
    );
    const all = {
      ...factories,
      relay_token: () => 'r',
      console_ticket: () => 'c',
      runtime_credential: () => 'u',
    };
    expect(() => assertCredentialFactories(matrix, all)).not.toThrow();
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
