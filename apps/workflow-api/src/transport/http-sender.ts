import { createHash } from 'node:crypto';
import http from 'node:http';
import https from 'node:https';
import tls from 'node:tls';
import { isIP } from 'node:net';
import type { LookupFunction } from 'node:net';
import { StringDecoder } from 'node:string_decoder';
import type { DeliveryResult } from '../domain/delivery-result';
import { STOP_RETRIES_HEADER } from '../domain/delivery-result';
import { DeliveryUrlError, checkDeliveryUrl } from '../domain/url-guard';
import type { CheckedDeliveryUrl, DeliveryResolver, ResolvedAddress } from '../domain/url-guard';
import { redactResponseSnippet } from '../domain/response-snippet';

/**
 * Sends one delivery: re-checks the URL, connects only to the checked addresses, POSTs once, never follows a
 * redirect, and gives up after `timeoutMs` in all (name resolution, connection, TLS, response and body).
 */

export const DELIVERY_USER_AGENT = 'svc-webhooks/1';
/** Bytes of the response body kept for the attempt record. */
export const RESPONSE_SNIPPET_BYTES = 2048;
/** A response body is read (and dropped) up to this size so the connection can be reused; beyond it, closed. */
const RESPONSE_DRAIN_LIMIT_BYTES = 256 * 1024;
const MAX_RETRY_AFTER_MS = 24 * 60 * 60 * 1000;
const DEFAULT_TIMEOUT_MS = 15_000;

export interface SendDeliveryOptions {
  url: string;
  headers: Record<string, string>;
  /** The exact body that was signed. */
  body: string;
  timeoutMs?: number;
  /** Development only: loopback endpoints are allowed (http or https). */
  allowLoopbackHttp: boolean;
  /** Extra trusted CA certificate (PEM), for endpoints with a private certificate. */
  ca?: string | Buffer;
  resolve?: DeliveryResolver;
  /** Keep-alive connections and TLS contexts: one pool per process, built by the wiring. */
  agents: DeliveryAgentPool;
}

/**
 * Per origin and address keep-alive agents, least recently used evicted beyond `maxAgents`, and the TLS context
 * of each extra CA (built once per CA, not per connection).
 */
export class DeliveryAgentPool {
  private readonly agents = new Map<string, http.Agent>();
  private readonly caDigests = new Map<string | Buffer, string>();
  private readonly secureContexts = new Map<string, tls.SecureContext>();
  private readonly maxAgents: number;
  private readonly idleSocketTimeoutMs: number;
  private readonly maxSocketsPerAgent: number;

  constructor(
    options: { maxAgents?: number; idleSocketTimeoutMs?: number; maxSocketsPerAgent?: number } = {},
  ) {
    this.maxAgents = options.maxAgents ?? 256;
    this.idleSocketTimeoutMs = options.idleSocketTimeoutMs ?? 4_000;
    this.maxSocketsPerAgent = options.maxSocketsPerAgent ?? 64;
  }

  get size(): number {
    return this.agents.size;
  }

  agentFor(key: string, secure: boolean): http.Agent {
    const existing = this.agents.get(key);
    if (existing) {
      this.agents.delete(key);
      this.agents.set(key, existing);
      return existing;
    }
    const options: http.AgentOptions = {
      keepAlive: true,
      // Idle sockets close after this long (Node's agent destroys a free socket on timeout).
      timeout: this.idleSocketTimeoutMs,
      maxSockets: this.maxSocketsPerAgent,
      // Keep every socket a busy endpoint needs: closing idle ones means a new TLS handshake per few deliveries.
      maxFreeSockets: this.maxSocketsPerAgent,
      scheduling: 'lifo',
    };
    const agent = secure ? new https.Agent(options) : new http.Agent(options);
    this.agents.set(key, agent);
    while (this.agents.size > this.maxAgents) {
      const oldest = this.agents.keys().next();
      if (oldest.done) break;
      const evicted = this.agents.get(oldest.value);
      this.agents.delete(oldest.value);
      // Sockets still in use finish their request and then close on the idle timeout.
      if (evicted) destroyFreeSockets(evicted);
    }
    return agent;
  }

  /** A short digest of an extra CA, naming it in agent keys. */
  caDigest(ca: string | Buffer): string {
    let digest = this.caDigests.get(ca);
    if (!digest) {
      digest = createHash('sha256').update(ca).digest('hex').slice(0, 16);
      if (this.caDigests.size > 16) this.caDigests.clear();
      this.caDigests.set(ca, digest);
    }
    return digest;
  }

  /** Node's public roots plus an extra CA (so a private receiver is trusted without distrusting the rest). */
  secureContextWith(ca: string | Buffer): tls.SecureContext {
    const digest = this.caDigest(ca);
    let context = this.secureContexts.get(digest);
    if (!context) {
      context = tls.createSecureContext({ ca: [...tls.rootCertificates, ca.toString()] });
      if (this.secureContexts.size > 16) this.secureContexts.clear();
      this.secureContexts.set(digest, context);
    }
    return context;
  }

  /** Closes every connection (shutdown, tests). */
  close(): void {
    for (const agent of this.agents.values()) agent.destroy();
    this.agents.clear();
  }
}

function destroyFreeSockets(agent: http.Agent): void {
  for (const sockets of Object.values(agent.freeSockets)) {
    for (const socket of sockets ?? []) socket.destroy();
  }
}

/**
 * A `lookup` that never resolves: it answers with the addresses the guard checked, whatever name it is asked
 * for. A single answer is the first checked address; with `all` (happy eyeballs) every checked address.
 */
export function pinnedLookup(addresses: ResolvedAddress[]): LookupFunction {
  const first = addresses[0];
  if (!first) throw new Error('pinnedLookup needs at least one address');
  const answers = addresses.map(({ address }) => ({ address, family: isIP(address) }));
  return (_hostname, options, callback) => {
    if (options.all)
      callback(
        null,
        answers.map((answer) => ({ ...answer })),
      );
    else callback(null, first.address, isIP(first.address));
  };
}

/** The request options for a checked URL: the pinned lookup, SNI, no redirects (Node's client never follows). */
export function deliveryRequestOptions(
  checked: CheckedDeliveryUrl,
  headers: Record<string, string>,
  body: string,
  extra: { secureContext?: tls.SecureContext; agent?: http.Agent } = {},
): https.RequestOptions {
  const { url, addresses } = checked;
  const hostname = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  const outgoing: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    const lower = name.toLowerCase();
    if (!OWN_HEADERS.has(lower)) outgoing[lower] = value;
  }
  outgoing['content-type'] ??= 'application/json';
  outgoing['user-agent'] = DELIVERY_USER_AGENT;
  outgoing['content-length'] = String(Buffer.byteLength(body, 'utf8'));
  const options: https.RequestOptions = {
    protocol: url.protocol,
    hostname,
    port: url.port === '' ? undefined : Number(url.port),
    path: `${url.pathname}${url.search}`,
    method: 'POST',
    headers: outgoing,
    lookup: pinnedLookup(addresses),
    agent: extra.agent,
  };
  if (url.protocol === 'https:') {
    // SNI carries names only; for an IP literal the certificate is matched against the IP.
    if (isIP(hostname) === 0) options.servername = hostname;
    // The public roots plus the extra CA, built once per CA (not per connection).
    if (extra.secureContext !== undefined)
      (options as tls.ConnectionOptions).secureContext = extra.secureContext;
  }
  return options;
}

/** Headers the sender sets (or that must not be chosen by the caller). */
const OWN_HEADERS = new Set(['host', 'content-length', 'transfer-encoding', 'connection', 'user-agent']);

export async function sendDelivery(options: SendDeliveryOptions): Promise<DeliveryResult> {
  const started = performance.now();
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const elapsed = () => Math.round(performance.now() - started);
  const failed = (error: string): DeliveryResult => ({
    status: null,
    latencyMs: elapsed(),
    responseSnippet: '',
    retryAfterMs: null,
    stopRetries: false,
    error,
  });

  let checked: CheckedDeliveryUrl;
  try {
    const check = await withTimeout(
      checkDeliveryUrl(options.url, {
        allowLoopbackHttp: options.allowLoopbackHttp,
        resolve: options.resolve,
      }),
      timeoutMs,
    );
    if (check === TIMED_OUT) return failed('timeout');
    checked = check;
  } catch (error) {
    return failed(error instanceof DeliveryUrlError ? error.code : 'url_unresolvable');
  }

  const remainingMs = Math.max(1, timeoutMs - (performance.now() - started));
  const secure = checked.url.protocol === 'https:';
  const pool = options.agents;
  const agent = pool.agentFor(agentKey(pool, checked, options.ca), secure);
  const requestOptions = deliveryRequestOptions(checked, options.headers, options.body, {
    ...(options.ca !== undefined ? { secureContext: pool.secureContextWith(options.ca) } : {}),
    agent,
  });
  const outcome = await exchange(secure ? https : http, requestOptions, options.body, remainingMs);
  return { ...outcome, latencyMs: elapsed() };
}

function agentKey(
  pool: DeliveryAgentPool,
  checked: CheckedDeliveryUrl,
  ca: string | Buffer | undefined,
): string {
  const addresses = checked.addresses.map((a) => a.address).join(',');
  return `${checked.url.origin}|${addresses}|${ca === undefined ? '' : pool.caDigest(ca)}`;
}

const TIMED_OUT = Symbol('timed out');

async function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T | typeof TIMED_OUT> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<typeof TIMED_OUT>((resolve) => {
    timer = setTimeout(() => resolve(TIMED_OUT), ms);
  });
  try {
    return await Promise.race([promise, expired]);
  } finally {
    clearTimeout(timer);
  }
}

function exchange(
  transport: typeof http | typeof https,
  requestOptions: https.RequestOptions,
  body: string,
  timeoutMs: number,
): Promise<Omit<DeliveryResult, 'latencyMs'>> {
  return new Promise((resolve) => {
    let settled = false;
    let status: number | null = null;
    let retryAfterMs: number | null = null;
    let stopRetries = false;
    let snippet = '';
    let captured = 0;
    let received = 0;
    const decoder = new StringDecoder('utf8');

    let request: http.ClientRequest;
    try {
      request = transport.request(requestOptions);
    } catch {
      // Node validates header names and values synchronously.
      resolve({
        status: null,
        responseSnippet: '',
        retryAfterMs: null,
        stopRetries: false,
        error: 'invalid_request',
      });
      return;
    }
    const timer = setTimeout(() => {
      finish('timeout');
      request.destroy();
    }, timeoutMs);

    function finish(error: string | null): void {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      // Postgres text cannot hold NUL: the attempt record keeps U+FFFD in its place.
      resolve({
        status,
        responseSnippet: redactResponseSnippet(snippet.replace(/\0/g, '\uFFFD')),
        retryAfterMs,
        stopRetries,
        error,
      });
    }

    request.on('error', (error) => finish(networkErrorCode(error)));
    request.on('response', (response) => {
      status = response.statusCode ?? null;
      retryAfterMs = parseRetryAfter(response.headers['retry-after']);
      stopRetries = asksToStopRetries(response.headers[STOP_RETRIES_HEADER]);
      response.on('data', (chunk: Buffer) => {
        if (captured < RESPONSE_SNIPPET_BYTES) {
          const part = chunk.subarray(0, RESPONSE_SNIPPET_BYTES - captured);
          captured += part.length;
          snippet += decoder.write(part);
        }
        received += chunk.length;
        if (received > RESPONSE_DRAIN_LIMIT_BYTES) {
          finish(null);
          response.destroy();
        }
      });
      response.on('end', () => finish(null));
      response.on('error', (error) => finish(networkErrorCode(error)));
      response.on('close', () => {
        if (!response.complete) finish('connection_reset');
      });
    });
    request.end(body);
  });
}

const TLS_ERROR_CODES = new Set([
  'CERT_HAS_EXPIRED',
  'CERT_NOT_YET_VALID',
  'CERT_REVOKED',
  'CERT_UNTRUSTED',
  'CERT_REJECTED',
  'CERT_SIGNATURE_FAILURE',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'HOSTNAME_MISMATCH',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'EPROTO',
]);

/** A stable code for a transport failure; the error's message (which names the address) is never used. */
export function networkErrorCode(error: unknown): string {
  const code = typeof error === 'object' && error !== null ? (error as { code?: unknown }).code : undefined;
  if (typeof code !== 'string') return 'network_error';
  if (TLS_ERROR_CODES.has(code) || code.startsWith('ERR_SSL_') || code.startsWith('ERR_TLS_'))
    return 'tls_error';
  if (code.startsWith('HPE_')) return 'invalid_response';
  switch (code) {
    case 'ECONNREFUSED':
      return 'connection_refused';
    case 'ECONNRESET':
    case 'EPIPE':
      return 'connection_reset';
    case 'ETIMEDOUT':
      return 'timeout';
    case 'EHOSTUNREACH':
    case 'ENETUNREACH':
    case 'EADDRNOTAVAIL':
      return 'host_unreachable';
    default:
      return 'network_error';
  }
}

/** `X-Svc-Stop-Retries: true` (any case, surrounding spaces ignored); only a non-2xx answer acts on it. */
export function asksToStopRetries(value: string | string[] | undefined): boolean {
  const text = Array.isArray(value) ? value[0] : value;
  return text !== undefined && text.trim().toLowerCase() === 'true';
}

/** `Retry-After` as milliseconds from `now`: delay-seconds or an HTTP-date, at most 24 h; null when unreadable. */
export function parseRetryAfter(
  value: string | string[] | undefined,
  now: number = Date.now(),
): number | null {
  const text = (Array.isArray(value) ? value[0] : value)?.trim();
  if (!text) return null;
  if (/^\d+$/.test(text)) return Math.min(Number(text) * 1000, MAX_RETRY_AFTER_MS);
  if (!/[a-z]/i.test(text)) return null;
  const at = Date.parse(text);
  if (Number.isNaN(at)) return null;
  return Math.min(Math.max(0, at - now), MAX_RETRY_AFTER_MS);
}
