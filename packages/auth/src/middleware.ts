import type { Request, RequestHandler } from 'express';
import { AuthError, assertValidAccessRule, checkAccess } from './actors';
import type { AccessRule, Actor, ActorKind, CredentialResolver } from './actors';

declare global {
  // Express's documented extension point for request properties is the global `Express` namespace.
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      /** Set by `authenticate` when a valid credential was presented. */
      actor?: Actor;
    }
  }
}

type CredentialKind = keyof CredentialResolver;

/** Header carrying each credential kind (express lowercases header names, so `X-API-Key` matches too). */
const CREDENTIAL_HEADERS: Record<Exclude<CredentialKind, 'bearer'>, string> = {
  apiKey: 'x-api-key',
  relayToken: 'x-svc-relay-token',
  serviceToken: 'x-svc-service-token',
};

/** The actor kinds each credential may resolve to; anything else is a resolver bug. */
const ACTORS_BY_CREDENTIAL: Record<CredentialKind, readonly ActorKind[]> = {
  bearer: ['participant', 'agent', 'service'],
  apiKey: ['api_key'],
  relayToken: ['relay_token'],
  serviceToken: ['service'],
};

const CREDENTIAL_LABELS: Record<CredentialKind, string> = {
  bearer: 'bearer token',
  apiKey: 'API key',
  relayToken: 'relay token',
  serviceToken: 'service token',
};

/** `Bearer <token68>` (RFC 6750 §2.1); the scheme name is case-insensitive. */
const BEARER_PATTERN = /^bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;

interface PresentedCredential {
  kind: CredentialKind;
  /** null when the header is present but unusable (wrong scheme, empty, repeated). */
  value: string | null;
}

function presentedCredentials(req: Request): PresentedCredential[] {
  const found: PresentedCredential[] = [];
  const authorization = req.headers.authorization;
  if (authorization !== undefined) {
    const match = BEARER_PATTERN.exec(authorization);
    found.push({ kind: 'bearer', value: match?.[1] ?? null });
  }
  for (const [kind, header] of Object.entries(CREDENTIAL_HEADERS) as [CredentialKind, string][]) {
    const raw = req.headers[header];
    if (raw !== undefined) {
      const value = typeof raw === 'string' ? raw.trim() : null;
      found.push({ kind, value: value === '' ? null : value });
    }
  }
  return found;
}

function resolveWith(
  resolver: CredentialResolver,
  kind: CredentialKind,
  value: string,
): Promise<Actor | null> | null {
  switch (kind) {
    case 'bearer':
      return resolver.bearer ? resolver.bearer(value) : null;
    case 'apiKey':
      return resolver.apiKey ? resolver.apiKey(value) : null;
    case 'relayToken':
      return resolver.relayToken ? resolver.relayToken(value) : null;
    case 'serviceToken':
      return resolver.serviceToken ? resolver.serviceToken(value) : null;
  }
}

/**
 * Reads the credential of a request and puts the resolved actor on `req.actor`.
 *
 * - No credential: `req.actor` stays undefined (routes decide with `authorize`).
 * - More than one credential kind: 401 `credential_invalid`, so that no route can be confused about
 *   which identity it is serving.
 * - Malformed header, a kind this service does not resolve, or a resolver answer of null:
 *   401 `credential_invalid`.
 * - A resolver that rejects (database or JWKS down): the error goes to `next` unchanged, to be answered
 *   as a 5xx/503 by the error handler.
 *
 * Error details name the credential kind, never its value.
 */
export function authenticate(resolver: CredentialResolver): RequestHandler {
  return (req, _res, next) => {
    const credentials = presentedCredentials(req);
    const [credential] = credentials;
    if (!credential) {
      next();
      return;
    }
    if (credentials.length > 1) {
      next(new AuthError('credential_invalid', 'send exactly one credential per request'));
      return;
    }
    const label = CREDENTIAL_LABELS[credential.kind];
    if (credential.value === null) {
      next(new AuthError('credential_invalid', `the ${label} header is malformed`));
      return;
    }
    let pending: Promise<Actor | null> | null;
    try {
      pending = resolveWith(resolver, credential.kind, credential.value);
    } catch (error) {
      next(error);
      return;
    }
    if (!pending) {
      next(new AuthError('credential_invalid', `this service does not accept a ${label}`));
      return;
    }
    pending.then(
      (actor) => {
        if (!actor) {
          next(new AuthError('credential_invalid', `the ${label} is not valid`));
          return;
        }
        if (!ACTORS_BY_CREDENTIAL[credential.kind].includes(actor.kind)) {
          next(new Error(`credential resolver returned a ${actor.kind} actor for a ${label}`));
          return;
        }
        req.actor = actor;
        next();
      },
      (error: unknown) => {
        next(error);
      },
    );
  };
}

/**
 * Guards a route: the caller must be one of `rule.actors`, and an `api_key` or `agent` caller must hold
 * every scope in `rule.scopes`. Participants, services and the relay token are not scope-checked here;
 * participant roles and workspace membership are checked by the handlers (see `checkAccess`).
 * The rule is validated when the middleware is created, so a typo fails at start-up.
 */
export function authorize(rule: AccessRule): RequestHandler {
  assertValidAccessRule(rule);
  const frozen: AccessRule = { actors: [...rule.actors], scopes: [...rule.scopes] };
  return (req, _res, next) => {
    const error = checkAccess(req.actor, frozen);
    if (error) {
      next(error);
      return;
    }
    next();
  };
}

/** The authenticated actor of a request, or a 401 `credential_missing` AuthError. */
export function requireActor(req: Request): Actor {
  if (!req.actor) {
    throw new AuthError('credential_missing', 'this operation requires a credential');
  }
  return req.actor;
}
