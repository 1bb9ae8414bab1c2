import createClient from 'openapi-fetch';
import { SpanKind, SpanStatusCode, context, propagation, trace } from '@opentelemetry/api';
import type { Span } from '@opentelemetry/api';
import type { Client, Middleware } from 'openapi-fetch';
import type { paths as HubPaths } from './generated/hub';
import type { paths as HubInternalPaths } from './generated/hubInternal';
import type { paths as WorkflowPaths } from './generated/workflow';
import type { paths as RelayPaths } from './generated/relay';
import type { paths as ConsoleRouterPaths } from './generated/consoleRouter';

/** What every client factory accepts. Each call builds an independent instance; nothing is global. */
export interface BaseClientOptions {
  baseUrl: string;
  /** A fetch implementation (defaults to the global one). */
  fetch?: (input: Request) => Promise<Response>;
  /** Extra headers sent with every request (e.g. `x-request-id`). */
  headers?: Record<string, string>;
  /** Sent as `User-Agent`-like `x-svc-client` so servers can tell SDK versions apart. */
  clientName?: string;
}

export interface HubClientOptions extends BaseClientOptions {
  /** Workspace API key (`svc_…`), sent as `x-api-key`. */
  apiKey?: string;
  /** Participant or agent JWT, sent as `Authorization: Bearer`. */
  token?: string | (() => string | Promise<string>);
}

export interface WorkflowClientOptions extends BaseClientOptions {
  /** Workspace API key (`svc_…`), sent as `X-API-Key`. */
  apiKey?: string;
  /** Agent JWT for agent-side stage calls, sent as `Authorization: Bearer`. */
  token?: string | (() => string | Promise<string>);
}

export interface ServiceClientOptions extends BaseClientOptions {
  /** Service credential shared between the platform's services, sent as `x-svc-service-token`. */
  serviceToken: string;
}

export type HubClient = Client<HubPaths>;
export type HubInternalClient = Client<HubInternalPaths>;
export type WorkflowClient = Client<WorkflowPaths>;
export type RelayClient = Client<RelayPaths>;
export type ConsoleRouterClient = Client<ConsoleRouterPaths>;

function credentialMiddleware(credentials: {
  apiKey?: string;
  apiKeyHeader?: string;
  token?: string | (() => string | Promise<string>);
  serviceToken?: string;
}): Middleware {
  return {
    async onRequest({ request }) {
      if (credentials.apiKey)
        request.headers.set(credentials.apiKeyHeader ?? 'x-api-key', credentials.apiKey);
      if (credentials.serviceToken) request.headers.set('x-svc-service-token', credentials.serviceToken);
      if (credentials.token) {
        const token = typeof credentials.token === 'function' ? await credentials.token() : credentials.token;
        request.headers.set('authorization', `Bearer ${token}`);
      }
      return request;
    },
  };
}

/**
 * W3C trace context on every request while the process has a propagator registered (a service with
 * tracing on): a client span per call, named by method and path template, whose `traceparent` the request
 * carries. Without one (tracing off, or a program that never set it up) it returns at its first line.
 */
function traceMiddleware(): Middleware {
  const spans = new Map<string, Span>();
  const end = (id: string, status?: number, error?: unknown) => {
    const span = spans.get(id);
    if (!span) return;
    spans.delete(id);
    if (status !== undefined) span.setAttribute('http.response.status_code', status);
    if (error !== undefined || (status !== undefined && status >= 500)) {
      span.setStatus({
        code: SpanStatusCode.ERROR,
        ...(error instanceof Error ? { message: error.message } : {}),
      });
    }
    span.end();
  };
  return {
    onRequest({ request, schemaPath, id }) {
      if (propagation.fields().length === 0) return undefined;
      const span = trace.getTracer('@svc/contracts').startSpan(`${request.method} ${schemaPath}`, {
        kind: SpanKind.CLIENT,
        attributes: {
          'http.request.method': request.method,
          'url.template': schemaPath,
          'server.address': new URL(request.url).host,
        },
      });
      spans.set(id, span);
      propagation.inject(trace.setSpan(context.active(), span), request.headers, {
        set: (headers, key, value) => headers.set(key, value),
      });
      return request;
    },
    onResponse({ response, id }) {
      end(id, response.status);
      return undefined;
    },
    onError({ error, id }) {
      end(id, undefined, error);
      return undefined;
    },
  };
}

function baseClient<Paths extends object>(options: BaseClientOptions): Client<Paths> {
  const client = createClient<Paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ''),
    ...(options.fetch ? { fetch: options.fetch } : {}),
    headers: { 'x-svc-client': options.clientName ?? '@svc/contracts', ...(options.headers ?? {}) },
  });
  client.use(traceMiddleware());
  return client;
}

export function createHubClient(options: HubClientOptions): HubClient {
  const client = baseClient<HubPaths>(options);
  client.use(credentialMiddleware({ apiKey: options.apiKey, token: options.token }));
  return client;
}

export function createWorkflowClient(options: WorkflowClientOptions): WorkflowClient {
  const client = baseClient<WorkflowPaths>(options);
  client.use(
    credentialMiddleware({ apiKey: options.apiKey, apiKeyHeader: 'X-API-Key', token: options.token }),
  );
  return client;
}

export function createHubInternalClient(options: ServiceClientOptions): HubInternalClient {
  const client = baseClient<HubInternalPaths>(options);
  client.use(credentialMiddleware({ serviceToken: options.serviceToken }));
  return client;
}

export function createRelayClient(options: BaseClientOptions & { relayToken?: string }): RelayClient {
  const client = baseClient<RelayPaths>(options);
  if (options.relayToken) {
    const relayToken = options.relayToken;
    client.use({
      onRequest({ request }) {
        request.headers.set('x-svc-relay-token', relayToken);
        return request;
      },
    });
  }
  return client;
}

export function createConsoleRouterClient(options: BaseClientOptions): ConsoleRouterClient {
  return baseClient<ConsoleRouterPaths>(options);
}
