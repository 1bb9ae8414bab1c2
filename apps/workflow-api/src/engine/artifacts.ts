import { actorIdentity } from '@svc/auth';
import type { Actor } from '@svc/auth';
import type { WorkflowApi } from '@svc/contracts';
import { AppError, canonicalHash, conflict, newId, redactValue } from '@svc/service-kit';
import type { ProjectRef } from '../auth/project-directory';
import type { WorkflowDeps } from '../deps';
import type { Artifact } from '../generated/prisma/client';
import type { ArtifactValidatorCache, PayloadError } from '../use-cases/artifact-schema-rules';
import { checkPayload } from '../use-cases/artifact-schema-rules';
import { findArtifactSchema } from '../use-cases/find-artifact-schema';
import { dispatchDeliveries, recordDeliveryEvent } from '../delivery/events';
import type { DeliveryJob } from '../delivery/queue';
import { loadInvocationTemplate } from './invocation-template';
import { invocationNotFound } from './launch';
import { lockInvocation } from './states';

export type ArtifactEnvelope = WorkflowApi.components['schemas']['ArtifactEnvelope'];
export type PublishBody = WorkflowApi.components['schemas']['ArtifactPublishRequest'];

export function presentEnvelope(artifact: Artifact): ArtifactEnvelope {
  return {
    envelope_version: '1',
    artifact_id: artifact.id,
    workspace_id: artifact.workspaceId,
    project_id: artifact.projectId,
    invocation_id: artifact.invocationId,
    run_id: artifact.runId,
    schema: { schema_id: artifact.schemaId, name: artifact.schemaName, version: artifact.schemaVersion },
    version: artifact.version,
    summary: artifact.summary,
    payload: artifact.payload,
    payload_sha256: artifact.payloadHash,
    provenance: artifact.provenance as ArtifactEnvelope['provenance'],
    limitations: (artifact.limitations as string[]) ?? [],
    created_by: { kind: artifact.createdByKind as 'api_key' | 'agent', id: artifact.createdById },
    created_at: artifact.createdAt.toISOString(),
  };
}

/** The envelope of an invocation of the project; 404 `artifact_not_found` until one is published. */
export async function getArtifact(
  deps: WorkflowDeps,
  projectId: string,
  invocationId: string,
): Promise<Artifact> {
  const artifact = await deps.db.artifact.findUnique({ where: { invocationId } });
  if (!artifact || artifact.projectId !== projectId) {
    const invocation = await deps.db.invocation.findFirst({
      where: { id: invocationId, projectId },
      select: { id: true },
    });
    if (!invocation) throw invocationNotFound(invocationId);
    throw new AppError({
      status: 404,
      code: 'artifact_not_found',
      detail: 'No artifact is published for this invocation yet; poll the invocation until it is completed.',
    });
  }
  return artifact;
}

type Outcome =
  | { kind: 'published'; artifact: Artifact; replayed: boolean }
  | { kind: 'rejected'; evidenceId: string; errors: PayloadError[]; schema: string };

/**
 * Publication of an invocation's result. The payload is validated against the pinned schema version; a
 * mismatch is kept as evidence (with the invocation's attention `artifact_rejected`) and refused with 422 after
 * the evidence is committed. A valid payload becomes the immutable envelope and the invocation `completed`.
 */
export async function publishArtifact(
  deps: WorkflowDeps,
  validators: ArtifactValidatorCache,
  actor: Actor,
  project: ProjectRef,
  invocationId: string,
  body: PublishBody,
  requestId?: string,
): Promise<{ artifact: Artifact; replayed: boolean }> {
  const payload = body.payload === undefined ? null : body.payload;
  const payloadHash = canonicalHash(payload);
  const who = actorIdentity(actor);
  const deliveryJobs: DeliveryJob[] = [];
  const outcome = await deps.db.$transaction(
    async (tx): Promise<Outcome> => {
      const invocation = await lockInvocation(tx, invocationId);
      if (!invocation || invocation.projectId !== project.id) throw invocationNotFound(invocationId);
      if (actor.kind === 'agent') {
        const owns = await tx.runStage.count({ where: { invocationId, ownerAgentId: actor.agentId } });
        if (owns === 0) {
          throw new AppError({
            status: 403,
            code: 'stage_not_owned',
            detail: 'Only an agent owning a stage of this invocation may publish its artifact.',
          });
        }
      }
      const existing = await tx.artifact.findUnique({ where: { invocationId } });
      if (existing) {
        if (existing.payloadHash === payloadHash)
          return { kind: 'published', artifact: existing, replayed: true };
        throw conflict(
          'artifact_already_published',
          'This invocation already has a published artifact; envelopes are immutable.',
          { artifact_id: existing.id },
        );
      }
      if (invocation.state === 'failed' || invocation.state === 'cancelled') {
        throw conflict(
          'invocation_terminal',
          `The invocation is '${invocation.state}'; nothing can be published.`,
        );
      }
      const run = await tx.workflowRun.findUnique({ where: { invocationId } });
      if (!run) {
        throw conflict('invocation_not_launched', 'The invocation has no run yet; launch it first.', {
          state: invocation.state,
        });
      }
      const template = await loadInvocationTemplate(tx, invocation);
      const pinned = template?.definition.artifact_schema;
      const schema = pinned ? await findArtifactSchema(tx, project.id, pinned.name, pinned.version) : null;
      if (!pinned || !schema) {
        throw conflict(
          'artifact_schema_not_registered',
          'The artifact schema version the invocation pinned is missing.',
        );
      }
      const now = deps.now();
      const check = checkPayload(validators.get(schema), payload);
      const audit = (action: string, data: Record<string, unknown>) =>
        deps.audit.record(
          {
            workspaceId: invocation.workspaceId,
            projectId: invocation.projectId,
            actor,
            action,
            targetType: 'invocation',
            targetId: invocationId,
            data: { schema: `${schema.name}@${schema.version}`, ...data },
            requestId,
          },
          tx,
        );
      if (!check.valid) {
        const evidenceId = newId('rej');
        await tx.artifactRejection.create({
          data: {
            id: evidenceId,
            invocationId,
            schemaName: schema.name,
            schemaVersion: schema.version,
            payload: payload as never,
            errors: check.errors as never,
            createdByKind: who.kind,
            createdById: who.id,
          },
        });
        const flagged = await tx.invocation.update({
          where: { id: invocationId },
          data: {
            attention: 'artifact_rejected',
            attentionReason: `A published payload did not match ${schema.name}@${schema.version} (${check.errors.length} error(s)); raw evidence ${evidenceId} is kept. Fix the producer.`,
          },
        });
        await audit('artifact.rejected', { evidence_id: evidenceId, errors: check.errors.length });
        deliveryJobs.push(
          ...(await recordDeliveryEvent(tx, flagged, 'invocation.artifact_rejected', null, now)),
        );
        return {
          kind: 'rejected',
          evidenceId,
          errors: check.errors,
          schema: `${schema.name}@${schema.version}`,
        };
      }
      const stages = await tx.runStage.findMany({ where: { invocationId }, orderBy: { position: 'asc' } });
      const artifact = await tx.artifact.create({
        data: {
          id: newId('art'),
          invocationId,
          runId: run.id,
          workspaceId: invocation.workspaceId,
          projectId: invocation.projectId,
          schemaId: schema.id,
          schemaName: schema.name,
          schemaVersion: schema.version,
          version: 1,
          summary: body.summary ?? '',
          payload: payload as never,
          payloadHash,
          provenance: {
            contract_id: invocation.contractId,
            template: { key: template!.key, version: template!.version },
            stages: stages.map((s) => ({
              key: s.key,
              owner_agent_id: s.ownerAgentId,
              completed_at: s.completedAt ? s.completedAt.toISOString() : null,
            })),
            correlation_id: invocation.correlationId,
            producer: redactValue(body.provenance ?? {}) as object,
          } as never,
          limitations: body.limitations ?? [],
          createdByKind: who.kind,
          createdById: who.id,
          createdAt: now,
        },
      });
      const completed = await tx.invocation.update({
        where: { id: invocationId },
        data: {
          state: 'completed',
          attention: 'none',
          attentionReason: null,
          blockers: [],
          completedAt: now,
        },
      });
      await tx.workflowRun.updateMany({
        where: { invocationId, endedAt: null },
        data: { state: 'ended', endedAt: now },
      });
      await audit('artifact.published', { artifact_id: artifact.id, payload_sha256: payloadHash });
      await audit('invocation.completed', { artifact_id: artifact.id });
      deliveryJobs.push(...(await recordDeliveryEvent(tx, completed, 'invocation.completed', artifact, now)));
      return { kind: 'published', artifact, replayed: false };
    },
    { timeout: 15_000, maxWait: 10_000 },
  );
  await dispatchDeliveries(deps.db, deps.deliveries, deliveryJobs);
  if (outcome.kind === 'rejected') {
    throw new AppError({
      status: 422,
      code: 'artifact_schema_mismatch',
      detail: `The payload does not conform to ${outcome.schema}; publication refused and the raw payload kept as evidence.`,
      extra: {
        evidence_id: outcome.evidenceId,
        errors: outcome.errors.map((e) => ({ location: `body/payload${e.path ?? ''}`, message: e.message })),
      },
    });
  }
  return { artifact: outcome.artifact, replayed: outcome.replayed };
}
