import { JwksUnavailableError, TokenError } from '@svc/auth';
import type { TokenVerifier } from '@svc/auth';
import { jwksUnavailable } from '@svc/service-kit/http';
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
const UNREAD_NAMES = Object.keys(UNREAD_HEADERS);

/** The `ticket` values of a query string (raw, undecoded pairs). */
export function ticketsOf(query: string): string[] {
  return new URLSearchParams(query).getAll('ticket');
}

/** Most verified tokens kept at once (bearer tokens and tickets each); the oldest entry goes first when full. */
export const VERIFIED_CACHE_SIZE = 10_000;

type Audience = 'participant' | 'agent' | 'console';
const BEARER_AUDIENCES: Audience[] = ['participant', 'agent', 'console'];
const TICKET_AUDIENCES: Audience[] = ['console'];

interface Remembered {
  credential: VerifiedCredential;
  expiresAtMs: number;
}

/** A bounded map of verified credentials, oldest out first, each until its token expires. */
class VerifiedCache {
  private readonly entries = new Map<string, Remembered>();
  /**
   * The last key found, and its entry: a console session sends the same token request after request, and
   * comparing a new copy of it with this one costs less than hashing it for the map.
   */
  private lastKey: string | undefined;
  private lastEntry: Remembered | undefined;

  constructor(
    private readonly size: number,
    private readonly now: () => number,
  ) {}

  get(key: string): VerifiedCredential | undefined {
    const entry = key === this.lastKey ? this.lastEntry : this.entries.get(key);
    if (entry === undefined) return undefined;
    if (entry.expiresAtMs > this.now()) {
      this.lastKey = key;
      this.lastEntry = entry;
      return entry.credential;
    }
    this.entries.delete(key);
    this.lastKey = undefined;
    this.lastEntry = undefined;
    return undefined;
  }

  set(key: string, credential: VerifiedCredential, expiresAtMs: number): void {
    if (this.entries.size >= this.size) {
      const oldest = this.entries.keys().next().value!;
      this.entries.delete(oldest);
      if (oldest === this.lastKey) this.lastKey = this.lastEntry = undefined;
    }
    const entry = { credential, expiresAtMs };
    this.entries.set(key, entry);
    if (key === this.lastKey) this.lastEntry = entry;
  }
}

export interface CredentialReader {
  /**
   * Reads and verifies the one credential a request carries; `query` is the query string (`?…`, or empty).
   * Rejects only when the hub's keys cannot be read (a 503, never a verdict on the credential).
   */
  (headers: HeaderBag, query: string): Promise<CredentialVerdict>;
  /**
   * The verified credential of a request whose one credential is a bearer token verified before and not yet
   * expired; undefined in every other case (ask the reader itself). No signature is checked here.
   */
  remembered(headers: HeaderBag, query: string): VerifiedCredential | undefined;
}

/**
 * Reads and verifies the one credential a request carries, through the hub's JWKS: `Authorization: Bearer`
 * with a participant JWT, an `AGENT_TOKEN` or a console ticket, or `?ticket=` with a console ticket (an
 * agent's token never travels in a URL). Two credentials at once, or a credential this router does not
 * read, are invalid. An unreachable JWKS is a 503 `jwks_unavailable`, never a verdict on the credential.
 *
 * Verified credentials are remembered until they expire: a signature check costs more CPU than forwarding the
 * request, and a console session sends the same token many times. Bearer tokens are remembered by the whole
 * `Authorization` value (so a request that sends it again is decided without parsing it), tickets by the
 * ticket. Only successes are kept, so a bad token is checked (and refused) every time; the size is bounded.
 */
export function createCredentialReader(
  tokens: TokenVerifier,
  options: { now?: () => number; cacheSize?: number } = {},
): CredentialReader {
  const now = options.now ?? Date.now;
  const cacheSize = options.cacheSize ?? VERIFIED_CACHE_SIZE;
  const bearers = new VerifiedCache(cacheSize, now);
  const tickets = new VerifiedCache(cacheSize, now);

  async function verify(
    token: string,
    audience: Audience[],
    cache: VerifiedCache,
    key: string,
  ): Promise<CredentialVerdict> {
    const cached = cache.get(key);
    if (cached) return { state: 'verified', credential: cached };
    let verified;
    try {
      verified = await tokens.verify(token, { audience });
    } catch (error) {
      if (error instanceof TokenError)
        return { state: 'invalid', detail: `the token is not valid (${error.reason})` };
      if (error instanceof JwksUnavailableError) {
        throw jwksUnavailable(error);
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
    cache.set(key, credential, verified.exp * 1000);
    return { state: 'verified', credential };
  }

  function hasUnreadHeader(headers: HeaderBag): boolean {
    for (const name of UNREAD_NAMES) if (headers[name] !== undefined) return true;
    return false;
  }

  const readCredential = async function readCredential(
    headers: HeaderBag,
    query: string,
  ): Promise<CredentialVerdict> {
    const ticketValues = query === '' ? [] : ticketsOf(query);
    const authorization = headers.authorization;
    const unread = hasUnreadHeader(headers) ? UNREAD_NAMES.filter((name) => headers[name] !== undefined) : [];
    const presented =
      (ticketValues.length > 0 ? 1 : 0) + (authorization !== undefined ? 1 : 0) + unread.length;
    if (presented === 0) return { state: 'missing' };
    if (presented > 1 || ticketValues.length > 1) {
      return { state: 'invalid', detail: 'send exactly one credential per request' };
    }
    const [other] = unread;
    if (other !== undefined) {
      return { state: 'invalid', detail: `the console router does not accept ${UNREAD_HEADERS[other]}` };
    }
    if (ticketValues.length === 1) {
      const ticket = ticketValues[0]!;
      return verify(ticket, TICKET_AUDIENCES, tickets, ticket);
    }
    const token = typeof authorization === 'string' ? BEARER.exec(authorization)?.[1] : undefined;
    if (!token || typeof authorization !== 'string') {
      return { state: 'invalid', detail: 'the bearer token header is malformed' };
    }
    return verify(token, BEARER_AUDIENCES, bearers, authorization);
  } as CredentialReader;

  readCredential.remembered = (headers, query) => {
    const authorization = headers.authorization;
    if (typeof authorization !== 'string') return undefined;
    // A query that may carry a ticket (also percent-encoded), or another credential beside the token: the
    // full reader decides.
    if (query.length > 0 && (query.includes('ticket') || query.includes('%'))) return undefined;
    if (hasUnreadHeader(headers)) return undefined;
    return bearers.get(authorization);
  };

  return readCredential;
}
