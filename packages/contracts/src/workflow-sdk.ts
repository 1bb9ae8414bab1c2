/**
 * Thin typed helpers over the generated Workflow API client: the idempotency and correlation headers become
 * named options, results are unwrapped from `{ data }`, and any non-success answer throws {@link ApiError}
 * (clients must treat every non-success status as failure).
 */
import { unwrap } from './api-error';
import type { WorkflowClient } from './clients';
import type { components } from './generated/workflow';

export type WorkflowInvocation = components['schemas']['InvocationsInvocation'];
export type WorkflowInvokeBody = components['schemas']['InvocationsCreateRequest'];
export type WorkflowPreflightBody = components['schemas']['InvocationsPreflightRequest'];
export type WorkflowPreflight = components['schemas']['InvocationsPreflight'];

export interface InvokeOptions {
  projectId: string;
  /** A stable key per logical request (1–255 printable ASCII); reuse it when retrying the same request. */
  idempotencyKey: string;
  /** Sent as `X-Correlation-ID` and stored with the invocation. */
  correlationId?: string;
  body: WorkflowInvokeBody;
  signal?: AbortSignal;
}

export interface InvokeResult {
  invocation: WorkflowInvocation;
  /** True when the key was already used for this same request and the original invocation came back. */
  replayed: boolean;
}

/**
 * Invoke: creates one invocation, or returns the original one for a retried request with the same key
 * (`replayed: true`). A key reused for a different request throws `ApiError` with code `idempotency_conflict`.
 */
export async function invoke(client: WorkflowClient, options: InvokeOptions): Promise<InvokeResult> {
  const result = await client.POST('/api/v1/projects/{projectId}/workflow/invocations', {
    params: {
      path: { projectId: options.projectId },
      header: {
        'Idempotency-Key': options.idempotencyKey,
        ...(options.correlationId !== undefined ? { 'X-Correlation-ID': options.correlationId } : {}),
      },
    },
    body: options.body,
    ...(options.signal ? { signal: options.signal } : {}),
  });
  const invocation = unwrap(result);
  return {
    invocation,
    replayed: result.response.status === 200 && result.response.headers.get('idempotent-replayed') === 'true',
  };
}

/** Reads an invocation's lifecycle (state, route, stages, latest handoff, attention). */
export async function getWorkflowInvocation(
  client: WorkflowClient,
  options: { projectId: string; invocationId: string; signal?: AbortSignal },
): Promise<WorkflowInvocation> {
  return unwrap(
    await client.GET('/api/v1/projects/{projectId}/workflow/invocations/{invocationId}', {
      params: { path: { projectId: options.projectId, invocationId: options.invocationId } },
      ...(options.signal ? { signal: options.signal } : {}),
    }),
  );
}

/** Preflight: read-only launch readiness of an intent (`route_ready`, `can_launch`, typed blockers). */
export async function preflightWorkflow(
  client: WorkflowClient,
  options: { projectId: string; body: WorkflowPreflightBody; signal?: AbortSignal },
): Promise<WorkflowPreflight> {
  return unwrap(
    await client.POST('/api/v1/projects/{projectId}/workflow/preflight', {
      params: { path: { projectId: options.projectId } },
      body: options.body,
      ...(options.signal ? { signal: options.signal } : {}),
    }),
  );
}
