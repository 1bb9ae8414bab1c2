import { actorIdentity } from '@svc/auth';
import type { Actor } from '@svc/auth';
import { invocationFingerprint, normalizeInvocationRequest } from '@svc/contracts';
import type { WorkflowApi } from '@svc/contracts';
import { AppError, assertStorableText, newId } from '@svc/service-kit';
import type { ProjectRef } from '../../auth/project-directory';
import { assistedContractRoute } from '../../data/assist-route.lookups';
import { auditEventInsert } from '../../data/audit.repository';
import type { WorkflowDeps } from '../../deps';
import { projectArchived } from '../../domain/errors';
import { assertIntentNotBlank } from '../../domain/invocation-request';
import type { InvocationRoute } from '../../domain/invocation-request';
import type { Invocation } from '../../generated/prisma/client';
import type { AssistCaller } from '../assist/suggest-contract';
import { resolveIntentAssisted } from '../resolve/resolve-intent';

/** Idempotency keys are kept this long; after that the same key starts a new invocation. */
export const IDEMPOTENCY_KEY_RETENTION_MS = 30 * 24 * 60 * 60 * 1000;

export type InvocationRequestBody = WorkflowApi.components['schemas']['InvocationsCreateRequest'];

const badRequest = (code: string, detail: string) => new AppError({ status: 400, code, detail });

/** The route of a request: pinned by the caller (checked against the project's active contracts) or resolved. */
async function decideInvocationRoute(
  deps: WorkflowDeps,
  projectId: string,
  request: InvocationRequestBody,
  caller: AssistCaller,
): Promise<InvocationRoute> {
  const pinnedKey = request.workflow_template_key;
  const pinnedVersion = request.workflow_template_version;
  if (pinnedVersion !== undefined && pinnedKey === undefined) {
    throw badRequest(
      'workflow_template_key_required',
      'workflow_template_version pins a version of a template: send workflow_template_key with it.',
    );
  }
  if (request.workflow_contract_id !== undefined) {
    const contract = await deps.db.workflowContract.findFirst({
      where: { id: request.workflow_contract_id, projectId, isActive: true },
    });
    if (!contract) {
      throw badRequest(
        'workflow_contract_not_found',
        `No active workflow contract '${request.workflow_contract_id}' in this project.`,
      );
    }
    if (
      (pinnedKey !== undefined && contract.templateKey !== pinnedKey) ||
      (pinnedVersion !== undefined && contract.templateVersion !== pinnedVersion)
    ) {
      throw badRequest(
        'workflow_template_mismatch',
        `Contract '${contract.id}' uses template ${contract.templateKey}@${contract.templateVersion}, not the pinned one.`,
      );
    }
    return {
      matched: true,
      selection: 'pinned_contract',
      contract_id: contract.id,
      template_key: contract.templateKey,
      template_version: contract.templateVersion,
      winner_reason: `Pinned by workflow_contract_id '${contract.id}'.`,
    };
  }
  if (pinnedKey !== undefined) {
    const contract = await deps.db.workflowContract.findFirst({
      where: {
        projectId,
        isActive: true,
        templateKey: pinnedKey,
        ...(pinnedVersion !== undefined ? { templateVersion: pinnedVersion } : {}),
      },
      orderBy: [{ priority: 'desc' }, { id: 'asc' }],
    });
    if (!contract) {
      throw badRequest(
        'workflow_template_not_found',
        `No active workflow contract of this project uses template '${pinnedKey}'${pinnedVersion !== undefined ? ` version '${pinnedVersion}'` : ''}.`,
      );
    }
    return {
      matched: true,
      selection: 'pinned_template',
      contract_id: contract.id,
      template_key: contract.templateKey,
      template_version: contract.templateVersion,
      winner_reason: `Pinned by workflow_template_key; '${contract.name}' (${contract.id}) is the highest-priority active contract using it.`,
    };
  }
  const { result: resolved, followContractId } = await resolveIntentAssisted(
    deps,
    projectId,
    {
      intent: request.intent,
      ...(request.required_capabilities ? { required_capabilities: request.required_capabilities } : {}),
      ...(request.metadata ? { metadata: request.metadata } : {}),
    },
    caller,
  );
  // The project allows assisted routing and the model suggested an active contract: follow it, and say so.
  const followed =
    followContractId !== null ? await assistedContractRoute(deps.db, projectId, followContractId) : null;
  if (followed) {
    return {
      matched: true,
      selection: 'resolved',
      contract_id: followed.contractId,
      template_key: followed.templateKey,
      template_version: followed.templateVersion,
      winner_reason: `Model-assisted: ${resolved.explanation.assistance?.suggestion?.reason ?? 'suggested by the project model'}`,
      model_assisted: true,
    };
  }
  return {
    matched: resolved.matched,
    selection: 'resolved',
    contract_id: resolved.contract?.contract_id ?? null,
    template_key: resolved.template?.key ?? null,
    template_version: resolved.template?.version ?? null,
    winner_reason: resolved.explanation.winner_reason,
  };
}

/** Where the values of the `invocation.created` audit event begin in {@link INSERT_INVOCATION}. */
const AUDIT_FIRST_PARAMETER = 18;

/**
 * Invoke's one statement: the invocation, the template's first use and the `invocation.created` audit event
 * (`INSERT … ON CONFLICT (project_id, idempotency_key) DO NOTHING` with data-modifying CTEs; the event is the
 * audit recorder's part, written only when the invocation was). A named prepared statement on the pool: each
 * connection parses and plans it once, and an invoke sends only its values.
 */
const INSERT_INVOCATION = {
  name: 'invocation_create',
  text: `
    WITH ins AS (
      INSERT INTO invocations (id, workspace_id, project_id, idempotency_key, fingerprint, correlation_id,
        request, intent, contract_id, template_key, template_version, route, state, attention, created_by_kind,
        created_by_id, created_at, updated_at, key_expires_at, retry_of)
      VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8, $9, $10, $11, $12::jsonb, 'received', 'none', $13, $14,
        $15::timestamptz, $15::timestamptz, $16::timestamptz, $17)
      ON CONFLICT (project_id, idempotency_key) DO NOTHING
      RETURNING id
    ),
    used AS (
      UPDATE workflow_templates SET first_used_at = $15::timestamptz
      WHERE project_id = $3 AND key = $10 AND version = $11 AND first_used_at IS NULL
        AND EXISTS (SELECT 1 FROM ins)
      RETURNING id
    ),
    audited AS (
      ${auditEventInsert(AUDIT_FIRST_PARAMETER, 'EXISTS (SELECT 1 FROM ins)')}
      RETURNING id
    )
    SELECT id FROM ins`,
};

export interface CreateInvocationInput {
  idempotencyKey: string;
  correlationId: string | null;
  body: InvocationRequestBody;
  requestId?: string;
  /** The failed or cancelled invocation this one retries (`retryInvocation`). */
  retryOf?: string;
}

export interface CreateInvocationResult {
  invocation: Invocation;
  replayed: boolean;
}

/**
 * Invoke: persists one invocation under (project, idempotency key) with its route, or returns the original.
 *
 * The row, the template's first use and the `invocation.created` audit event are written by ONE statement
 * (`INSERT … ON CONFLICT (project_id, idempotency_key) DO NOTHING` with data-modifying CTEs), so concurrent
 * identical calls produce exactly one row and one audit event, with no read-then-insert race; a caller whose
 * insert did nothing reads the winner's row and compares fingerprints. A key past its retention is renamed
 * on the old row (a newline and the old id appended — a newline cannot occur in a key), then inserted again.
 */
export async function createInvocation(
  deps: WorkflowDeps,
  actor: Actor,
  project: ProjectRef,
  input: CreateInvocationInput,
): Promise<CreateInvocationResult> {
  // The router refuses such text before any handler; this keeps the rule for callers of the use case itself.
  assertStorableText(input.body, 'body');
  assertIntentNotBlank(input.body.intent);
  if (project.archivedAt) throw projectArchived(project.id);
  // The intent is kept exactly as sent (`intent`); matching, the stored request and the fingerprint use the
  // normalized form, so a retry differing only in case or spacing replays.
  const request = normalizeInvocationRequest(input.body);
  // The SDK computes the same fingerprint from the same body (`invocationFingerprint` of @svc/contracts).
  // A retry's key stands for "retry this invocation": the same key for another original is another request.
  const fingerprint =
    input.retryOf === undefined
      ? invocationFingerprint(input.body)
      : `${invocationFingerprint(input.body)}:retry:${input.retryOf}`;
  const route = await decideInvocationRoute(deps, project.id, request, {
    actor,
    project,
    ...(input.requestId ? { requestId: input.requestId } : {}),
    // A retry of a stored invocation is answered from its row: it must not spend a model call.
    worthAsking: async () => {
      const existing = await deps.db.invocation.findUnique({
        where: { projectId_idempotencyKey: { projectId: project.id, idempotencyKey: input.idempotencyKey } },
        select: { keyExpiresAt: true },
      });
      return !existing || existing.keyExpiresAt.getTime() <= deps.now().getTime();
    },
  });
  const who = actorIdentity(actor);

  for (let attempt = 0; attempt < 3; attempt += 1) {
    const now = deps.now();
    const id = newId('inv', now.getTime());
    const keyExpiresAt = new Date(now.getTime() + IDEMPOTENCY_KEY_RETENTION_MS);
    const nowIso = now.toISOString();
    const inserted = await deps.pool.query<{ id: string }>({
      name: INSERT_INVOCATION.name,
      text: INSERT_INVOCATION.text,
      values: [
        id,
        project.workspace.id,
        project.id,
        input.idempotencyKey,
        fingerprint,
        input.correlationId,
        JSON.stringify(request),
        input.body.intent,
        route.contract_id,
        route.template_key,
        route.template_version,
        JSON.stringify(route),
        who.kind,
        who.id,
        nowIso,
        keyExpiresAt.toISOString(),
        input.retryOf ?? null,
        ...deps.audit.statementValues(
          {
            workspaceId: project.workspace.id,
            projectId: project.id,
            actor,
            action: 'invocation.created',
            targetType: 'invocation',
            targetId: id,
            data: {
              correlation_id: input.correlationId,
              route,
              ...(input.retryOf ? { retry_of: input.retryOf } : {}),
            },
            requestId: input.requestId,
          },
          now,
        ),
      ],
    });
    if (inserted.rows.length > 0) {
      return {
        replayed: false,
        invocation: {
          id,
          workspaceId: project.workspace.id,
          projectId: project.id,
          idempotencyKey: input.idempotencyKey,
          fingerprint,
          correlationId: input.correlationId,
          request: request as never,
          intent: input.body.intent,
          contractId: route.contract_id,
          templateKey: route.template_key,
          templateVersion: route.template_version,
          route: route as never,
          state: 'received',
          attention: 'none',
          createdByKind: who.kind,
          createdById: who.id,
          createdAt: now,
          updatedAt: now,
          keyExpiresAt,
          attentionReason: null,
          blockers: [],
          approvalRequired: false,
          approvalDecision: null,
          approvalBy: null,
          approvalAt: null,
          approvalComment: null,
          launchedAt: null,
          completedAt: null,
          failure: null,
          cancellation: null,
          deadlineAt: null,
          queuedAt: null,
          retryOf: input.retryOf ?? null,
        },
      };
    }

    const existing = await deps.db.invocation.findUnique({
      where: { projectId_idempotencyKey: { projectId: project.id, idempotencyKey: input.idempotencyKey } },
    });
    if (!existing) continue; // renamed by a concurrent expiry between our insert and this read
    if (existing.keyExpiresAt.getTime() <= now.getTime()) {
      await deps.db.$executeRaw`
        UPDATE invocations SET idempotency_key = idempotency_key || chr(10) || id
        WHERE id = ${existing.id} AND key_expires_at <= ${nowIso}::timestamptz`;
      continue;
    }
    if (existing.fingerprint !== fingerprint) {
      throw new AppError({
        status: 409,
        code: 'idempotency_conflict',
        detail:
          'This Idempotency-Key was used for a different request. Restore the original request to get its invocation, or use a new key for a new request.',
        extra: { invocation_id: existing.id },
      });
    }
    return { invocation: existing, replayed: true };
  }
  throw new AppError({
    status: 409,
    code: 'idempotency_key_busy',
    detail: 'This Idempotency-Key is being replaced concurrently; retry the request.',
  });
}
