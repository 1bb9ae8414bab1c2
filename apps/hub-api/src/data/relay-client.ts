import { createRelayClient } from '@svc/contracts';
import type { RelayApi } from '@svc/contracts';
import { publicUrlsOf } from '../domain/tunnel-urls';
import type { EnvironmentUrls } from '../domain/tunnel-urls';

type RelaySchemas = RelayApi.components['schemas'];
export type RelaySpawnRequest = RelaySchemas['SpawnRequest'];
export type RelaySpawnStarted = RelaySchemas['SpawnStarted'];

/** What a host row contributes to its relay's address. */
export interface RelayHostAddress {
  relayPublicUrl: string | null;
  relayBindHost: string;
  relayListenPort: number;
  consolePublicBaseUrl: string;
}

/**
 * The base URL the hub reaches a host's relay at: its public relay URL (the environment's tunnel while it is
 * active, else the host's own) when it has one, else the relay's bind address.
 */
export function relayBaseUrl(host: RelayHostAddress, environment?: EnvironmentUrls | null): string {
  const publicUrl = publicUrlsOf(host, environment).relay;
  if (publicUrl) return publicUrl.replace(/\/+$/, '');
  const bindHost = host.relayBindHost.includes(':') ? `[${host.relayBindHost}]` : host.relayBindHost;
  return `http://${bindHost}:${host.relayListenPort}`;
}

/** Problem statuses of the relay contract that carry the spawn's final outcome. */
const TERMINAL_PROBLEM_STATUSES = new Set([400, 401, 403, 409, 422, 502, 503, 504]);

/** One answer of the relay to `POST /spawn`, sorted by what the caller does next. */
export type RelaySpawnAnswer =
  | { kind: 'started'; started: RelaySpawnStarted }
  | { kind: 'in_flight'; retryAfterSeconds: number | null }
  | {
      kind: 'failed';
      status: number | null;
      code: string;
      detail: string | null;
      rule: number | null;
      cliCode: string | null;
    }
  /** No outcome: the network failed, the call timed out, or an untyped 5xx/429. Retry the same spawn id. */
  | { kind: 'retry'; reason: string; status: number | null };

export interface RelaySpawnCall {
  baseUrl: string;
  /** The host's relay token, unsealed by the caller; sent as `x-svc-relay-token` and nowhere else. */
  relayToken: string;
  request: RelaySpawnRequest;
  timeoutMs: number;
  /** Aborts the call (the hub is stopping). */
  signal?: AbortSignal;
  fetch?: (input: Request) => Promise<Response>;
}

const stringOrNull = (value: unknown) => (typeof value === 'string' ? value : null);
const integerOrNull = (value: unknown) => (Number.isInteger(value) ? (value as number) : null);

/**
 * Calls a relay's `POST /spawn` once. Never throws for what the relay or the network does; the token is
 * only in the request header, never in the answer returned.
 */
export async function callRelaySpawn(call: RelaySpawnCall): Promise<RelaySpawnAnswer> {
  const client = createRelayClient({
    baseUrl: call.baseUrl,
    relayToken: call.relayToken,
    clientName: 'hub-api',
    ...(call.fetch ? { fetch: call.fetch } : {}),
  });
  const timeout = AbortSignal.timeout(call.timeoutMs);
  const signal = call.signal ? AbortSignal.any([call.signal, timeout]) : timeout;
  let result;
  try {
    result = await client.POST('/spawn', { body: call.request, signal });
  } catch {
    if (call.signal?.aborted) return { kind: 'retry', reason: 'hub_stopping', status: null };
    if (timeout.aborted) return { kind: 'retry', reason: 'relay_timeout', status: null };
    return { kind: 'retry', reason: 'relay_unreachable', status: null };
  }
  const { response } = result;
  const status = response.status;
  if (status === 200 && result.data && (result.data as { state?: unknown }).state === 'started') {
    return { kind: 'started', started: result.data as RelaySpawnStarted };
  }
  if (status === 202) {
    const header = Number(response.headers.get('retry-after'));
    return { kind: 'in_flight', retryAfterSeconds: Number.isFinite(header) && header >= 0 ? header : null };
  }
  const problem = (result.error ?? {}) as Record<string, unknown>;
  const code = stringOrNull(problem.code);
  if (TERMINAL_PROBLEM_STATUSES.has(status) && code) {
    return {
      kind: 'failed',
      status,
      code,
      detail: stringOrNull(problem.detail),
      rule: integerOrNull(problem.rule),
      cliCode: stringOrNull(problem.cli_code),
    };
  }
  if (status >= 500 || status === 429) return { kind: 'retry', reason: `relay_http_${status}`, status };
  return {
    kind: 'failed',
    status,
    code: 'relay_answer_unexpected',
    detail: `The relay answered HTTP ${status} without a spawn outcome.`,
    rule: null,
    cliCode: null,
  };
}
