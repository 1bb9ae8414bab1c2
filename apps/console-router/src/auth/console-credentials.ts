import { JwksUnavailableError, TokenError } from '@svc/auth';
import type { TokenVerifier } from '@svc/auth';
import { AppError } from '@svc/service-kit';
import type { VerifiedCredential } from '../domain/console-access';

/** What the credentials of a request come to, before the route's rules are applied. */
export type CredentialVerdict =
  | { state: 'missing' }
  | { state: 'invalid'; detail: string }
  | { state: 'verified'; credential: VerifiedCredential };

type HeaderBag = Record<string, string | string[] | undefined>;

const BEARER = /^bearer +([A-Za-z0-9\-._~+/]+=*) *$/i;
/** Credentials of other services: presented here they are refused, never read. */
const UNREAD_HEADERS: Record<string, string> = {
  'x-api-key': 'an API key',
  'x-svc-service-token': 'a service token',
  'x-svc-relay-token': 'a relay token',
};

/** The `ticket` values of a query string (raw, undecoded pairs). */
export function ticketsOf(query: string): string[] {
  return new URLSearchParams(query).getAll('ticket');
}

/** Most verified tokens kept at once; the oldest entry goes first when full. */
export const VERIFIED_CACHE_SIZE = 10_000;

/**
 * Reads and verifies the one credential a request carries, through the hub's JWKS: `Authorization: Bearer`
 * with a participant JWT, an `AGENT_TOKEN` or a console ticket, or `?ticket=` with a console ticket (an
 * agent's token never travels in a URL). Two credentials at once, or a credential this router does not
 * read, are invalid. An unreachable JWKS is a 503 `jwks_unavailable`, never a verdict on the credential.
 */
export function createCredentialReader(
  tokens: TokenVerifier,
  options: { now?: () => number; cacheSize?: number } = {},
) {
  const now = options.now ?? Date.now;
  const cacheSize = options.cacheSize ?? VERIFIED_CACHE_SIZE;
  /**
   * Verified credentials by token and accepted audiences, until the token expires: a signature check costs more
   * CPU than forwarding the request, and a console session sends the same token many times. Only successes are
   * kept, so a bad token is checked (and refused) every time; the size is bounded.
   */
  const verifiedCache = new Map<string, { credential: VerifiedCredential; expiresAtMs: number }>();

  async function verify(
    token: string,
    audience: ('participant' | 'agent' | 'console')[],
  ): Promise<CredentialVerdict> {
    const key = `${audience.join(',')} ${token}`;
    const cached = verifiedCache.get(key);
    if (cached) {
      if (cached.expiresAtMs > now()) return { state: 'verified', credential: cached.credential };
      verifiedCache.delete(key);
    }
    let verified;
    try {
      verified = await tokens.verify(token, { audience });
    } catch (error) {
      if (error instanceof TokenError)
        return { state: 'invalid', detail: `the token is not valid (${error.reason})` };
      if (error instanceof JwksUnavailableError) {
        throw new AppError({
          status: 503,
          code: 'jwks_unavailable',
          detail: "The hub's signing keys cannot be read right now; retry shortly.",
          headers: { 'Retry-After': '5' },
          cause: error,
        });
      }
      throw error;
    }
    const credential: VerifiedCredential =
      verified.aud === 'participant'
        ? { kind: 'participant', participantId: verified.sub }
        : verified.aud === 'agent'
          ? { kind: 'agent', agentId: verified.sub, workspaceId: verified.claims.workspace_id }
          : {
              kind: 'ticket',
              participantId: verified.sub,
              workspaceId: verified.claims.ws,
              agentId: verified.claims.agent,
            };
    if (verifiedCache.size >= cacheSize) verifiedCache.delete(verifiedCache.keys().next().value!);
    verifiedCache.set(key, { credential, expiresAtMs: verified.exp * 1000 });
    return { state: 'verified', credential };
  }

  return async function readCredential(headers: HeaderBag, query: string): Promise<CredentialVerdict> {
    const tickets = ticketsOf(query);
    const authorization = headers.authorization;
    const unread = Object.keys(UNREAD_HEADERS).filter((name) => headers[name] !== undefined);
    const presented = (tickets.length > 0 ? 1 : 0) + (authorization !== undefined ? 1 : 0) + unread.length;
    if (presented === 0) return { state: 'missing' };
    if (presented > 1 || tickets.length > 1) {
      return { state: 'invalid', detail: 'send exactly one credential per request' };
    }
    const [other] = unread;
    if (other !== undefined) {
      return { state: 'invalid', detail: `the console router does not accept ${UNREAD_HEADERS[other]}` };
    }
    if (tickets.length === 1) return verify(tickets[0]!, ['console']);
    const token = typeof authorization === 'string' ? BEARER.exec(authorization)?.[1] : undefined;
    if (!token) return { state: 'invalid', detail: 'the bearer token header is malformed' };
    return verify(token, ['participant', 'agent', 'console']);
  };
}

export type CredentialReader = ReturnType<typeof createCredentialReader>;
