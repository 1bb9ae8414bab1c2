/**
 * Thin typed helpers over the generated Workflow API client: the idempotency and correlation headers become
 * named options, results are unwrapped from `{ data }`, and any non-success answer throws `ApiError`
 * (clients must treat every non-success status as failure). This file: invoke, read, list, preflight, launch,
 * cancel and approval; consuming a result is in `workflow-artifacts.ts`, envelope checks in `workflow-envelope.ts`.
 */
import { unwrap } from './api-error';
import type { WorkflowClient } from './clients';
import type { components, operations } from './generated/workflow';
import { invocationPath } from './workflow-target';
import type { InvocationTarget } from './workflow-target';

export type WorkflowInvocation = components['schemas']['InvocationsInvocation'];
export type WorkflowInvokeBody = components['schemas']['InvocationsCreateRequest'];
export type WorkflowPreflightBody = components['schemas']['InvocationsPreflightRequest'];
export type WorkflowPreflight = components['schemas']['InvocationsPreflight'];
export type WorkflowInvocationState = components['schemas']['InvocationsState'];
export type WorkflowBlocker = components['schemas']['InvocationsBlocker'];
/** What resolve's model assistance did, in its explanation (only when the project's model was asked). */
export type WorkflowAssistance = components['schemas']['AssistanceExplanation'];
export type WorkflowInvocationSummary = components['schemas']['InvocationsInvocationSummary'];
export type WorkflowLaunchReport = components['schemas']['RunsLaunchResponse']['launch'];
export type WorkflowInvocationFilter = NonNullable<
  NonNullable<operations['listInvocations']['parameters']['query']>
>;
export type WorkflowApprovalDecision = components['schemas']['RunsApprovalRequest']['decision'];
export type WorkflowArtifactEnvelope = components['schemas']['ArtifactEnvelope'];
export type WorkflowArtifactPublishBody = components['schemas']['ArtifactPublishRequest'];

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

/**
 * Launch: starts (or reconciles) the governed run and returns the invocation (`launching`, or its current
 * state; a terminal one comes back unchanged). A route that is not ready throws `ApiError` with code
 * `launch_blocked`, whose `problem.blockers` lists why (same shape as preflight's).
 */
export async function launchInvocation(
  client: WorkflowClient,
  options: InvocationTarget,
): Promise<WorkflowInvocation> {
  return unwrap(
    await client.POST('/api/v1/projects/{projectId}/workflow/invocations/{invocationId}/launch', {
      params: invocationPath(options),
      ...(options.signal ? { signal: options.signal } : {}),
    }),
  );
}

/**
 * Approves or rejects a run held by the `human_approval_required` guardrail. Needs a client built with a
 * participant token (owner or admin); `reject` ends the invocation as `cancelled`.
 */
export async function decideApproval(
  client: WorkflowClient,
  options: InvocationTarget & { decision: WorkflowApprovalDecision; comment?: string },
): Promise<WorkflowInvocation> {
  return unwrap(
    await client.POST('/api/v1/projects/{projectId}/workflow/invocations/{invocationId}/approval', {
      params: invocationPath(options),
      body: {
        decision: options.decision,
        ...(options.comment !== undefined ? { comment: options.comment } : {}),
      },
      ...(options.signal ? { signal: options.signal } : {}),
    }),
  );
}

/**
 * Launch, with what the launch did: `launch.outcome` is `accepted`, `accepted_waiting_for_owner` (with the
 * `waits_for_owner` blockers), `reconciling` or `terminal`. A refused launch throws `ApiError` `launch_blocked`.
 */
export async function launchWorkflow(
  client: WorkflowClient,
  options: InvocationTarget,
): Promise<{ invocation: WorkflowInvocation; launch: WorkflowLaunchReport }> {
  const result = await client.POST(
    '/api/v1/projects/{projectId}/workflow/invocations/{invocationId}/launch',
    {
      params: invocationPath(options),
      ...(options.signal ? { signal: options.signal } : {}),
    },
  );
  const invocation = unwrap(result);
  return { invocation, launch: result.data!.launch };
}

/** One page of the project's invocations, newest first; pass `next_cursor` back as `cursor` for the next. */
export async function listWorkflowInvocations(
  client: WorkflowClient,
  options: { projectId: string; filter?: WorkflowInvocationFilter; signal?: AbortSignal },
): Promise<{ invocations: WorkflowInvocationSummary[]; nextCursor: string | null }> {
  const result = await client.GET('/api/v1/projects/{projectId}/workflow/invocations', {
    params: { path: { projectId: options.projectId }, query: options.filter ?? {} },
    ...(options.signal ? { signal: options.signal } : {}),
  });
  const invocations = unwrap(result);
  return { invocations, nextCursor: result.data!.next_cursor };
}

/**
 * Cancels an invocation that is not terminal (a cancelled one comes back unchanged); a completed or failed one
 * throws `ApiError` `invocation_terminal`.
 */
export async function cancelWorkflowInvocation(
  client: WorkflowClient,
  options: InvocationTarget & { reason?: string },
): Promise<WorkflowInvocation> {
  return unwrap(
    await client.POST('/api/v1/projects/{projectId}/workflow/invocations/{invocationId}/cancel', {
      params: invocationPath(options),
      body: options.reason !== undefined ? { reason: options.reason } : {},
      ...(options.signal ? { signal: options.signal } : {}),
    }),
  );
}
