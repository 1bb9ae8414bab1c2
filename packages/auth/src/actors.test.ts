import { ACTOR_KINDS, AuthError, assertValidAccessRule, checkAccess, isActorKind } from './actors';
import type { AccessRule, Actor, ActorKind } from './actors';

const SAMPLE_ACTORS: Record<ActorKind, Actor> = {
  participant: { kind: 'participant', participantId: 'par_1', email: 'ada@example.test', tokenId: 'jti-1' },
  api_key: {
    kind: 'api_key',
    keyId: 'key_1',
    workspaceId: 'ws_1',
    scopes: ['projects:read', 'workflows:run'],
    prefix: 'abcdefgh2345',
  },
  agent: {
    kind: 'agent',
    agentId: 'agt_1',
    workspaceId: 'ws_1',
    runtimeInstanceId: 'rti_1',
    scopes: ['projects:read', 'workflows:run'],
  },
  service: { kind: 'service', service: 'workflow-api' },
  relay_token: { kind: 'relay_token' },
};

const SCOPE_CHECKED: readonly ActorKind[] = ['api_key', 'agent'];
const NOT_SCOPE_CHECKED: readonly ActorKind[] = ['participant', 'service', 'relay_token'];
const others = (kind: ActorKind): ActorKind[] => ACTOR_KINDS.filter((other) => other !== kind);

describe('checkAccess', () => {
  it.each(ACTOR_KINDS)(
    'when no actor is present and the rule allows %s, then it is 401 credential_missing',
    (kind) => {
      const error = checkAccess(undefined, { actors: [kind], scopes: [] });
      expect(error).toBeInstanceOf(AuthError);
      expect(error).toMatchObject({ status: 401, code: 'credential_missing' });
    },
  );

  it.each(ACTOR_KINDS)('when a %s actor is allowed and holds every scope, then access is granted', (kind) => {
    expect(
      checkAccess(SAMPLE_ACTORS[kind], { actors: [kind], scopes: ['projects:read', 'workflows:run'] }),
    ).toBeNull();
  });

  it.each(ACTOR_KINDS)(
    'when a %s actor is allowed and no scope is required, then access is granted',
    (kind) => {
      expect(checkAccess(SAMPLE_ACTORS[kind], { actors: ACTOR_KINDS, scopes: [] })).toBeNull();
    },
  );

  it.each(ACTOR_KINDS)(
    'when a %s actor is not in the allowed actors, then it is 403 actor_not_allowed',
    (kind) => {
      const error = checkAccess(SAMPLE_ACTORS[kind], { actors: others(kind), scopes: [] });
      expect(error).toMatchObject({ status: 403, code: 'actor_not_allowed', expose: true });
      expect(error?.missing).toBeUndefined();
    },
  );

  it.each(ACTOR_KINDS)(
    'when a %s actor is not allowed and also lacks scopes, then the actor check wins',
    (kind) => {
      const error = checkAccess(SAMPLE_ACTORS[kind], { actors: others(kind), scopes: ['admin:workspace'] });
      expect(error?.code).toBe('actor_not_allowed');
    },
  );

  it.each(SCOPE_CHECKED)(
    'when a %s actor lacks required scopes, then it is 403 scope_missing listing them',
    (kind) => {
      const error = checkAccess(SAMPLE_ACTORS[kind], {
        actors: [kind],
        scopes: ['projects:read', 'artifact-schemas:write', 'teams:write'],
      });
      expect(error).toMatchObject({
        status: 403,
        code: 'scope_missing',
        missing: ['artifact-schemas:write', 'teams:write'],
      });
      expect(error?.detail).toBe('missing scopes: artifact-schemas:write teams:write');
    },
  );

  it.each(SCOPE_CHECKED)(
    'when a %s actor holds a broader-looking scope, then it does not stand in for another',
    (kind) => {
      const actor = { ...SAMPLE_ACTORS[kind], scopes: ['admin:workspace', 'projects:write'] } as Actor;
      const error = checkAccess(actor, { actors: [kind], scopes: ['projects:read'] });
      expect(error).toMatchObject({ code: 'scope_missing', missing: ['projects:read'] });
    },
  );

  it.each(NOT_SCOPE_CHECKED)(
    'when a %s actor is allowed but the rule lists scopes, then scopes are not checked here',
    (kind) => {
      expect(checkAccess(SAMPLE_ACTORS[kind], { actors: [kind], scopes: ['admin:workspace'] })).toBeNull();
    },
  );

  it('when an api_key actor has no scopes at all, then every required scope is missing', () => {
    const actor: Actor = { ...(SAMPLE_ACTORS.api_key as Extract<Actor, { kind: 'api_key' }>), scopes: [] };
    expect(checkAccess(actor, { actors: ['api_key'], scopes: ['contract:read'] })).toMatchObject({
      missing: ['contract:read'],
    });
  });

  it('when the rule allows no actor at all, then every actor is refused', () => {
    for (const kind of ACTOR_KINDS) {
      expect(checkAccess(SAMPLE_ACTORS[kind], { actors: [], scopes: [] })?.code).toBe('actor_not_allowed');
    }
  });
});

describe('AuthError', () => {
  it.each([
    ['credential_missing', 401],
    ['credential_invalid', 401],
    ['actor_not_allowed', 403],
    ['scope_missing', 403],
    ['workspace_forbidden', 403],
  ] as const)('when the code is %s, then the status is %d', (code, status) => {
    const error = new AuthError(code, 'safe detail');
    expect(error).toBeInstanceOf(Error);
    expect(error).toMatchObject({ name: 'AuthError', code, status, detail: 'safe detail', expose: true });
    expect(error.message).toBe('safe detail');
  });

  it('when a missing list is given, then the error keeps its own copy', () => {
    const missing = ['teams:write'];
    const error = new AuthError('scope_missing', 'missing scopes: teams:write', { missing });
    missing.push('admin:workspace');
    expect(error.missing).toEqual(['teams:write']);
  });
});

describe('assertValidAccessRule', () => {
  it('when the rule names known actors and scopes, then it is accepted', () => {
    expect(() =>
      assertValidAccessRule({ actors: ['api_key', 'agent'], scopes: ['workflows:run'] }),
    ).not.toThrow();
  });

  it.each<[string, AccessRule]>([
    ['no actors', { actors: [], scopes: [] }],
    ['an unknown actor kind', { actors: ['robot' as ActorKind], scopes: [] }],
    ['an unknown scope', { actors: ['api_key'], scopes: ['workflow:run'] }],
    ['a wildcard scope', { actors: ['api_key'], scopes: ['artifact-schemas:*'] }],
  ])('when the rule has %s, then it is refused', (_label, rule) => {
    expect(() => assertValidAccessRule(rule)).toThrow(TypeError);
  });

  it('when actor kinds are checked, then only the five kinds pass', () => {
    expect(ACTOR_KINDS.every((kind) => isActorKind(kind))).toBe(true);
    expect(isActorKind('admin')).toBe(false);
    expect(isActorKind(undefined)).toBe(false);
  });
});
