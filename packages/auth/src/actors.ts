import { isScope, missingScopes } from './scopes';

/** Who is calling. Matches `x-svc-actors` in the OpenAPI documents. */
export const ACTOR_KINDS = ['participant', 'api_key', 'agent', 'service', 'relay_token'] as const;
export type ActorKind = (typeof ACTOR_KINDS)[number];

export function isActorKind(value: unknown): value is ActorKind {
  return typeof value === 'string' && (ACTOR_KINDS as readonly string[]).includes(value);
}

/** A human, authenticated with a participant JWT. */
export interface ParticipantActor {
  kind: 'participant';
  participantId: string;
  email: string;
  /** `jti` of the bearer token. */
  tokenId: string;
}

/** Workspace automation, authenticated with a workspace API key. */
export interface ApiKeyActor {
  kind: 'api_key';
  keyId: string;
  workspaceId: string;
  scopes: string[];
  /** Public key prefix, safe to log. */
  prefix: string;
}

/** A live agent, authenticated with its `AGENT_TOKEN` JWT. */
export interface AgentActor {
  kind: 'agent';
  agentId: string;
  workspaceId: string;
  /** `rti_*` of the runtime host the agent runs on, when known. */
  runtimeInstanceId: string | null;
  scopes: string[];
}

/** Another service of this platform, on internal routes. */
export interface ServiceActor {
  kind: 'service';
  service: string;
}

/** The hub (or control) calling a runtime host's relay with the relay token. */
export interface RelayTokenActor {
  kind: 'relay_token';
}

export type Actor = ParticipantActor | ApiKeyActor | AgentActor | ServiceActor | RelayTokenActor;

/**
 * Turns a presented credential into an actor. Each method gets the raw credential (for `bearer`, the
 * token after `Bearer `); it resolves `null` when the credential is invalid (unknown, revoked, expired,
 * bad signature) and rejects only on infrastructure failure. A service implements only the credential
 * kinds it accepts; any other kind is answered with `credential_invalid`.
 */
export interface CredentialResolver {
  bearer?(token: string): Promise<Actor | null>;
  apiKey?(raw: string): Promise<Actor | null>;
  relayToken?(raw: string): Promise<Actor | null>;
  serviceToken?(raw: string): Promise<Actor | null>;
}

export type AuthErrorCode =
  'credential_missing' | 'credential_invalid' | 'actor_not_allowed' | 'scope_missing' | 'workspace_forbidden';

const STATUS_BY_CODE: Record<AuthErrorCode, 401 | 403> = {
  credential_missing: 401,
  credential_invalid: 401,
  actor_not_allowed: 403,
  scope_missing: 403,
  workspace_forbidden: 403,
};

/**
 * An authentication (401) or authorization (403) failure. `status` follows from `code`. `detail` is
 * safe to send to the client and never contains the credential. `expose` tells error handlers that the
 * message may be shown.
 */
export class AuthError extends Error {
  readonly status: 401 | 403;
  readonly code: AuthErrorCode;
  readonly detail: string;
  readonly missing?: string[];
  readonly expose = true;

  constructor(code: AuthErrorCode, detail: string, options?: { missing?: string[] }) {
    super(detail);
    this.name = 'AuthError';
    this.code = code;
    this.status = STATUS_BY_CODE[code];
    this.detail = detail;
    if (options?.missing !== undefined) {
      this.missing = [...options.missing];
    }
  }
}

/** Which actors an operation accepts, and which scopes key- and agent-based actors must hold. */
export interface AccessRule {
  actors: readonly ActorKind[];
  scopes: readonly string[];
}

/**
 * Decides whether `actor` may call an operation guarded by `rule`; returns the error to send, or null.
 *
 * Scopes are checked only for `api_key` and `agent` actors, which carry a scope list. Participants are
 * governed by their workspace role, services and the relay token by the route they may reach at all;
 * those checks happen in the handlers (a participant passing here is not yet authorized for a given
 * workspace). Workspace membership of keys and agents is likewise checked where the workspace is known
 * (`workspace_forbidden`).
 */
export function checkAccess(actor: Actor | undefined, rule: AccessRule): AuthError | null {
  if (!actor) {
    return new AuthError('credential_missing', 'this operation requires a credential');
  }
  if (!rule.actors.includes(actor.kind)) {
    return new AuthError('actor_not_allowed', `this operation does not accept ${actor.kind} credentials`);
  }
  if (actor.kind === 'api_key' || actor.kind === 'agent') {
    const missing = missingScopes(actor.scopes, rule.scopes);
    if (missing.length > 0) {
      return new AuthError('scope_missing', `missing scopes: ${missing.join(' ')}`, { missing });
    }
  }
  return null;
}

/**
 * Validates a rule once, at route definition time: at least one actor, only known actor kinds and
 * scopes (catches typos that would otherwise make a route unreachable).
 */
export function assertValidAccessRule(rule: AccessRule): void {
  if (rule.actors.length === 0) {
    throw new TypeError('an access rule must accept at least one actor kind');
  }
  const badActors = rule.actors.filter((kind) => !isActorKind(kind));
  if (badActors.length > 0) {
    throw new TypeError(`unknown actor kinds in access rule: ${badActors.join(', ')}`);
  }
  const badScopes = rule.scopes.filter((scope) => !isScope(scope));
  if (badScopes.length > 0) {
    throw new TypeError(`unknown scopes in access rule: ${badScopes.join(', ')}`);
  }
}

/** The kind and id of an actor as audit records store them (never a credential). */
export function actorIdentity(actor: Actor | undefined): { kind: string; id: string | null } {
  switch (actor?.kind) {
    case 'participant':
      return { kind: 'participant', id: actor.participantId };
    case 'api_key':
      return { kind: 'api_key', id: actor.keyId };
    case 'agent':
      return { kind: 'agent', id: actor.agentId };
    case 'service':
      return { kind: 'service', id: actor.service };
    case 'relay_token':
      return { kind: 'relay_token', id: null };
    default:
      return { kind: 'anonymous', id: null };
  }
}
