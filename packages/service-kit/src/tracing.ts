import { ROOT_CONTEXT, SpanKind, SpanStatusCode, context, propagation, trace } from '@opentelemetry/api';
import type { Context, Span, TextMapGetter } from '@opentelemetry/api';
import type * as ContextAsyncHooks from '@opentelemetry/context-async-hooks';
import type * as Core from '@opentelemetry/core';
import type * as OtlpHttp from '@opentelemetry/exporter-trace-otlp-http';
import type * as OtlpProto from '@opentelemetry/exporter-trace-otlp-proto';
import type * as Resources from '@opentelemetry/resources';
import type * as SdkTrace from '@opentelemetry/sdk-trace';
import type { NextFunction, Request, RequestHandler, Response } from 'express';
import type { Logger } from 'pino';
import { ConfigError } from './env';
import { operationOf } from './metrics';
import { scrubSecrets } from './secrets';

/**
 * OpenTelemetry traces, configured by the standard `OTEL_*` variables and off unless `OTEL_TRACES_EXPORTER`
 * names an exporter. While off nothing of the SDK is loaded, no middleware is mounted and every helper here
 * returns at its first line.
 */
export type TracingSettings =
  | { enabled: false }
  | {
      enabled: true;
      serviceName: string;
      exporters: ('otlp' | 'console')[];
      /** OTLP over HTTP: `http/protobuf` (the OTLP default) or `http/json`. */
      protocol: 'http/protobuf' | 'http/json';
      /** `OTEL_TRACES_SAMPLER` (default `parentbased_always_on`) and its ratio `OTEL_TRACES_SAMPLER_ARG`. */
      sampler: { name: (typeof SAMPLERS)[number]; ratio: number };
      /** `OTEL_BSP_*`: the batching of exports. */
      batch: {
        scheduledDelayMillis?: number;
        exportTimeoutMillis?: number;
        maxQueueSize?: number;
        maxExportBatchSize?: number;
      };
    };

const SAMPLERS = [
  'always_on',
  'always_off',
  'traceidratio',
  'parentbased_always_on',
  'parentbased_always_off',
  'parentbased_traceidratio',
] as const;

function positiveInteger(env: NodeJS.ProcessEnv, name: string): number | undefined {
  const raw = env[name]?.trim();
  if (raw === undefined || raw === '') return undefined;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0)
    throw new ConfigError(`${name}: ${raw} is not a positive integer`);
  return value;
}

const TRUE = new Set(['true', '1', 'yes']);

/** Reads the `OTEL_*` variables this platform honours; throws a {@link ConfigError} naming a wrong one. */
export function tracingSettingsFromEnv(env: NodeJS.ProcessEnv, defaultServiceName: string): TracingSettings {
  if (TRUE.has((env.OTEL_SDK_DISABLED ?? '').trim().toLowerCase())) return { enabled: false };
  const names = (env.OTEL_TRACES_EXPORTER ?? '')
    .split(',')
    .map((name) => name.trim().toLowerCase())
    .filter((name) => name !== '' && name !== 'none');
  if (names.length === 0) return { enabled: false };
  const unknown = names.filter((name) => name !== 'otlp' && name !== 'console');
  if (unknown.length > 0) {
    throw new ConfigError(
      `OTEL_TRACES_EXPORTER: ${unknown.join(', ')} is not supported (use otlp, console or none)`,
    );
  }
  const protocol = (
    env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ??
    env.OTEL_EXPORTER_OTLP_PROTOCOL ??
    'http/protobuf'
  ).trim();
  if (protocol !== 'http/protobuf' && protocol !== 'http/json') {
    throw new ConfigError(
      `OTEL_EXPORTER_OTLP_PROTOCOL: ${protocol} is not supported (use http/protobuf or http/json)`,
    );
  }
  const samplerName = (env.OTEL_TRACES_SAMPLER?.trim() || 'parentbased_always_on').toLowerCase();
  if (!(SAMPLERS as readonly string[]).includes(samplerName)) {
    throw new ConfigError(
      `OTEL_TRACES_SAMPLER: ${samplerName} is not supported (use ${SAMPLERS.join(', ')})`,
    );
  }
  const ratioRaw = env.OTEL_TRACES_SAMPLER_ARG?.trim();
  const ratio = ratioRaw ? Number(ratioRaw) : 1;
  if (samplerName.endsWith('traceidratio') && !(ratio >= 0 && ratio <= 1)) {
    throw new ConfigError(`OTEL_TRACES_SAMPLER_ARG: ${ratioRaw} is not a ratio between 0 and 1`);
  }
  const batch = {
    scheduledDelayMillis: positiveInteger(env, 'OTEL_BSP_SCHEDULE_DELAY'),
    exportTimeoutMillis: positiveInteger(env, 'OTEL_BSP_EXPORT_TIMEOUT'),
    maxQueueSize: positiveInteger(env, 'OTEL_BSP_MAX_QUEUE_SIZE'),
    maxExportBatchSize: positiveInteger(env, 'OTEL_BSP_MAX_EXPORT_BATCH_SIZE'),
  };
  return {
    enabled: true,
    serviceName: env.OTEL_SERVICE_NAME?.trim() || defaultServiceName,
    exporters: [...new Set(names)] as ('otlp' | 'console')[],
    protocol,
    sampler: { name: samplerName as (typeof SAMPLERS)[number], ratio },
    batch: Object.fromEntries(Object.entries(batch).filter(([, v]) => v !== undefined)),
  };
}

let tracingOn = false;

/** Whether this process exports traces (set by {@link startTracing}). */
export function tracingEnabled(): boolean {
  return tracingOn;
}

export interface TracingHandle {
  readonly enabled: boolean;
  /** Ends the exporter after sending the spans still buffered (call it last when the process stops). */
  shutdown(): Promise<void>;
}

/**
 * Starts tracing for this process when the `OTEL_*` variables ask for it: a tracer provider with the
 * service's name, W3C trace context propagation and a batching exporter (OTLP over HTTP at
 * `OTEL_EXPORTER_OTLP_ENDPOINT` / `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`, or the console). Call it first in
 * an entry point, before apps and clients are built.
 */
export function startTracing(options: {
  serviceName: string;
  env?: NodeJS.ProcessEnv;
  logger?: Logger;
}): TracingHandle {
  const settings = tracingSettingsFromEnv(options.env ?? process.env, options.serviceName);
  if (!settings.enabled) return { enabled: false, shutdown: async () => undefined };
  // Loaded only here, so a process with tracing off never loads the SDK.
  /* eslint-disable @typescript-eslint/no-require-imports */
  const sdk = require('@opentelemetry/sdk-trace') as typeof SdkTrace;
  const { resourceFromAttributes } = require('@opentelemetry/resources') as typeof Resources;
  const { W3CTraceContextPropagator } = require('@opentelemetry/core') as typeof Core;
  const { AsyncLocalStorageContextManager } =
    require('@opentelemetry/context-async-hooks') as typeof ContextAsyncHooks;
  const processors = settings.exporters.map((name) => {
    if (name === 'console') return new sdk.SimpleSpanProcessor({ exporter: new sdk.ConsoleSpanExporter() });
    const { OTLPTraceExporter } =
      settings.protocol === 'http/json'
        ? (require('@opentelemetry/exporter-trace-otlp-http') as typeof OtlpHttp)
        : (require('@opentelemetry/exporter-trace-otlp-proto') as typeof OtlpProto);
    // Endpoint, headers and timeout come from the OTEL_EXPORTER_OTLP_* variables.
    return new sdk.BatchSpanProcessor({ exporter: new OTLPTraceExporter(), ...settings.batch });
  });
  /* eslint-enable @typescript-eslint/no-require-imports */
  const { name: samplerName, ratio } = settings.sampler;
  const root = samplerName.endsWith('always_off')
    ? new sdk.AlwaysOffSampler()
    : samplerName.endsWith('traceidratio')
      ? new sdk.TraceIdRatioBasedSampler(ratio)
      : new sdk.AlwaysOnSampler();
  const provider = new sdk.TracerProvider({
    resource: resourceFromAttributes({ 'service.name': settings.serviceName }),
    sampler: samplerName.startsWith('parentbased_') ? new sdk.ParentBasedSampler({ root }) : root,
    spanProcessors: processors,
  });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  tracingOn = true;
  options.logger?.info(
    { service_name: settings.serviceName, exporters: settings.exporters, protocol: settings.protocol },
    'tracing on',
  );
  let stopping: Promise<void> | undefined;
  return {
    enabled: true,
    shutdown() {
      stopping ??= provider.shutdown().catch((error: unknown) => {
        options.logger?.warn({ err: error }, 'trace export on shutdown failed');
      });
      return stopping;
    },
  };
}

function tracer() {
  return trace.getTracer('@svc/service-kit');
}

/** The W3C `traceparent` of the active span (undefined while tracing is off or outside a span). */
export function currentTraceparent(): string | undefined {
  if (!tracingOn) return undefined;
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent;
}

/** Trace headers (`traceparent`, `tracestate`) of the active span, to add to an outgoing request. */
export function traceHeaders(): Record<string, string> {
  if (!tracingOn) return {};
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier;
}

/** Job data with the active span's `traceparent` added, so the job continues the trace that enqueued it. */
export function withTraceparent<T extends object>(data: T): T & { traceparent?: string } {
  const traceparent = currentTraceparent();
  return traceparent ? { ...data, traceparent } : data;
}

const headerGetter: TextMapGetter<Request['headers']> = {
  keys: (carrier) => Object.keys(carrier),
  get: (carrier, key) => carrier[key],
};

const UNTRACED_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

/**
 * Express middleware opening one server span per request, continuing the caller's `traceparent`. The span
 * is named by the operation id the operation router labelled the request with (the method alone for
 * requests no operation answered). Probes and scrapes without a `traceparent` get none. Undefined while
 * tracing is off: nothing is mounted.
 */
export function tracingMiddleware(): RequestHandler | undefined {
  if (!tracingOn) return undefined;
  return (req: Request, res: Response, next: NextFunction) => {
    // Probes and scrapes nobody traced would each start a trace of their own: they get no span.
    if (UNTRACED_PATHS.has(req.path) && req.headers.traceparent === undefined) {
      next();
      return;
    }
    const parent = propagation.extract(ROOT_CONTEXT, req.headers, headerGetter);
    const span = tracer().startSpan(
      req.method,
      {
        kind: SpanKind.SERVER,
        attributes: {
          'http.request.method': req.method,
          'url.path': scrubSecrets(req.originalUrl.split('?')[0] ?? ''),
        },
      },
      parent,
    );
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      const operation = operationOf(res);
      if (operation !== 'unmatched') {
        span.updateName(operation);
        span.setAttribute('svc.operation', operation);
      }
      span.setAttribute('http.response.status_code', res.statusCode);
      if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      if (!res.writableFinished) span.setAttribute('svc.aborted', true);
      span.end();
    };
    res.once('finish', end);
    res.once('close', end);
    context.with(trace.setSpan(parent, span), next);
  };
}

function parentOf(traceparent: unknown): Context {
  if (typeof traceparent !== 'string') return ROOT_CONTEXT;
  return propagation.extract(ROOT_CONTEXT, { traceparent });
}

/**
 * Runs `work` in a span of its own: continuing `traceparent` when given (a job enqueued inside a trace),
 * else the active span. Errors end the span as failed unless `isFailure` says otherwise. While tracing is
 * off it only calls `work`.
 */
export async function inSpan<T>(
  name: string,
  options: {
    kind?: SpanKind;
    traceparent?: unknown;
    /** `traceparent`s of spans this work was caused by without being their child (span links). */
    links?: unknown[];
    attributes?: Record<string, string | number | boolean>;
    isFailure?: (error: unknown) => boolean;
  },
  work: (span: Span | undefined) => Promise<T>,
): Promise<T> {
  if (!tracingOn) return work(undefined);
  const parent = options.traceparent !== undefined ? parentOf(options.traceparent) : context.active();
  const links = (options.links ?? [])
    .map((link) => trace.getSpanContext(parentOf(link)))
    .filter((linked) => linked !== undefined)
    .map((linked) => ({ context: linked }));
  const span = tracer().startSpan(
    name,
    { kind: options.kind ?? SpanKind.INTERNAL, attributes: options.attributes, links },
    parent,
  );
  try {
    return await context.with(trace.setSpan(parent, span), () => work(span));
  } catch (error) {
    if (options.isFailure?.(error) ?? true) {
      span.recordException(error as Error);
      span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error)?.message });
    }
    throw error;
  } finally {
    span.end();
  }
}

export { SpanKind, SpanStatusCode };
