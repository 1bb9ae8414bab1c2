// One file because a publication has two paths that must decide alike: a valid payload written in one pass, and
// the transaction that answers every other case (and a valid one whose rows changed under the lock).
import { actorIdentity } from '@svc/auth';
import type { Actor } from '@svc/auth';
import type { WorkflowApi } from '@svc/contracts';
import { AppError, canonicalHash, conflict, newId, redactValue } from '@svc/service-kit';
import type { ProjectRef } from '../../auth/project-directory';
import { publishUnderLock } from '../../data/artifact-publication.writer';
import type { PublicationRead, PublicationWrite } from '../../data/artifact-publication.writer';
import { cachedPinnedArtifactSchema, findPinnedArtifactSchema } from '../../data/artifact-schemas.lookups';
import type { PinnedArtifactSchema } from '../../data/artifact-schemas.lookups';
import type { WorkflowAuditEntry } from '../../data/audit.repository';
import { dispatchDeliveries, recordDeliveryEvent } from '../../data/delivery.events';
import { deliveryBody } from '../../domain/delivery-event';
import type { DeliveryJob } from '../../data/delivery.queue';
import { cachedInvocationTemplate, loadInvocationTemplate } from '../../data/invocation-templates.lookups';
import { endInvocation } from '../../data/invocation.ending';
import { lockInvocation } from '../../data/invocations.locks';
import { readInvocationView } from '../../data/run-details.lookups';
import { redactText } from '../../data/run-stage.ownership';
import { evidenceBatchRows, storeEvidenceBatch } from '../../data/stage-evidence.writer';
import { sqlOfPrisma } from '../../db';
import type { Tx } from '../../db';
import type { WorkflowDeps } from '../../deps';
import { checkPayload } from '../../domain/artifact-schema-rules';
import type { ArtifactValidatorCache, PayloadError } from '../../domain/artifact-schema-rules';
import { invocationNotFound } from '../../domain/errors';
import { failureOf, isFailable, rejectionsExceeded } from '../../domain/invocation-ending';
import { OPEN_STAGE_STATES } from '../../domain/invocation-states';
import type { RouteTemplate } from '../../domain/template-definition';
import type { Artifact, Invocation, RunStage, WorkflowRun } from '../../generated/prisma/client';
import { closeInvocationHandoffs } from '../engine/close-stage-handoffs';

export type PublishBody = WorkflowApi.components['schemas']['ArtifactPublishRequest'];

type Outcome =
  | { kind: 'published'; artifact: Artifact; replayed: boolean }
  | { kind: 'rejected'; evidenceId: string; errors: PayloadError[]; schema: string };

/** One publication inside its transaction: the locked invocation, its run, pinned template and schema. */
interface Publication {
  deps: WorkflowDeps;
  tx: Tx;
  actor: Actor;
  invocation: Invocation;
  run: WorkflowRun;
  template: RouteTemplate;
  schema: PinnedArtifactSchema;
  body: PublishBody;
  payload: unknown;
  payloadHash: string;
  now: Date;
  requestId: string | undefined;
  /** Deliveries recorded by the publication, enqueued after the commit. */
  deliveryJobs: DeliveryJob[];
  /** The invocation's stages in order, read once under the lock. */
  stages: RunStage[];
  /** Audit entries of the publication, written together in one statement. */
  auditEntries: WorkflowAuditEntry[];
}

/** An agent may publish only for an invocation one of whose stages it owns. */
function assertMayPublish(actor: Actor, stages: RunStage[]): void {
  if (actor.kind !== 'agent') return;
  if (!stages.some((s) => s.ownerAgentId === actor.agentId)) {
    throw new AppError({
      status: 403,
      code: 'stage_not_owned',
      detail: 'Only an agent owning a stage of this invocation may publish its artifact.',
    });
  }
}

const evidenceNotOwned = () =>
  new AppError({
    status: 403,
    code: 'stage_not_owned',
    detail:
      "Evidence comes with a publication only from the agent owning the invocation's final stage; send the payload without it.",
  });

/** A publication already made: the same payload is a replay, another one is refused (envelopes are immutable). */
function replayOf(existing: Artifact, payloadHash: string): Outcome {
  if (existing.payloadHash === payloadHash) return { kind: 'published', artifact: existing, replayed: true };
  throw conflict(
    'artifact_already_published',
    'This invocation already has a published artifact; envelopes are immutable.',
    { artifact_id: existing.id },
  );
}

/** The run, template and registered schema version a publication needs; 409 when the invocation has none. */
async function publicationTarget(
  tx: Tx,
  projectId: string,
  invocation: Invocation,
  run: WorkflowRun | null,
): Promise<{ run: WorkflowRun; template: RouteTemplate; schema: PinnedArtifactSchema }> {
  if (invocation.state === 'failed' || invocation.state === 'cancelled') {
    throw conflict(
      'invocation_terminal',
      `The invocation is '${invocation.state}'; nothing can be published.`,
    );
  }
  if (!run) {
    throw conflict('invocation_not_launched', 'The invocation has no run yet; launch it first.', {
      state: invocation.state,
    });
  }
  const template = await loadInvocationTemplate(sqlOfPrisma(tx), invocation);
  const pinned = template?.definition.artifact_schema;
  const schema = pinned ? await findPinnedArtifactSchema(tx, projectId, pinned.name, pinned.version) : null;
  if (!template || !pinned || !schema) {
    throw conflict(
      'artifact_schema_not_registered',
      'The artifact schema version the invocation pinned is missing.',
    );
  }
  return { run, template, schema };
}

/** An audit entry of the publication about its invocation (written with the others by {@link writeAudit}). */
function audit(p: Publication, action: string, data: Record<string, unknown>): void {
  p.auditEntries.push({
    workspaceId: p.invocation.workspaceId,
    projectId: p.invocation.projectId,
    actor: p.actor,
    action,
    targetType: 'invocation',
    targetId: p.invocation.id,
    data: { schema: `${p.schema.name}@${p.schema.version}`, ...data },
    requestId: p.requestId,
  });
}

const writeAudit = (p: Publication) => p.deps.audit.recordMany(p.auditEntries.splice(0), p.tx);

/** A payload that does not match: kept as evidence, the invocation flagged `artifact_rejected`. */
async function recordRejection(p: Publication, errors: PayloadError[]): Promise<Outcome> {
  const evidenceId = newId('rej');
  const who = actorIdentity(p.actor);
  const schema = `${p.schema.name}@${p.schema.version}`;
  await p.tx.artifactRejection.create({
    data: {
      id: evidenceId,
      invocationId: p.invocation.id,
      schemaName: p.schema.name,
      schemaVersion: p.schema.version,
      payload: p.payload as never,
      errors: errors as never,
      createdByKind: who.kind,
      createdById: who.id,
    },
  });
  const flagged = await p.tx.invocation.update({
    where: { id: p.invocation.id },
    data: {
      attention: 'artifact_rejected',
      attentionReason: `A published payload did not match ${schema} (${errors.length} error(s)); raw evidence ${evidenceId} is kept. Fix the producer.`,
    },
  });
  audit(p, 'artifact.rejected', { evidence_id: evidenceId, errors: errors.length });
  await writeAudit(p);
  p.deliveryJobs.push(
    ...(await recordDeliveryEvent(sqlOfPrisma(p.tx), flagged, 'invocation.artifact_rejected', null, p.now)),
  );
  const allowed = p.template.definition.guardrails.artifact_rejections_allowed;
  if (allowed !== undefined && isFailable(flagged.state)) {
    const rejections = await p.tx.artifactRejection.count({ where: { invocationId: p.invocation.id } });
    if (rejectionsExceeded(rejections, allowed)) {
      const ended = await endInvocation(
        p.deps,
        sqlOfPrisma(p.tx),
        flagged,
        { state: 'failed', failure: failureOf('artifact_rejections_exceeded', p.now, { allowed }) },
        { kind: 'service', service: 'workflow-engine' },
        p.now,
        p.requestId,
      );
      p.deliveryJobs.push(...ended.deliveryJobs);
    }
  }
  return { kind: 'rejected', evidenceId, errors, schema };
}

/**
 * The owner of the final stage publishing from it: the publication is that stage's completion, so the stage is
 * completed now with the publication's summary and evidence (its later `complete` is answered as a replay) and
 * the envelope records when. A stage still open under another publisher (an API key) is not completed by it and
 * keeps `completed_at` null; evidence from anyone but the final stage's owner is refused.
 */
async function completePublishingStage(p: Publication, stages: RunStage[]): Promise<RunStage[]> {
  const evidence = p.body.evidence;
  if (p.actor.kind !== 'agent') return stages;
  const final = stages.at(-1);
  const owner = final?.ownerAgentId === p.actor.agentId;
  if (!owner && evidence?.length) throw evidenceNotOwned();
  if (!final || !owner) return stages;
  // The final stage's evidence, even when that stage was completed before the publication (`waiting_for_artifact`).
  await storeEvidenceBatch(p.tx, final.id, p.actor.agentId, evidence, p.now);
  if (!(OPEN_STAGE_STATES as readonly string[]).includes(final.state)) return stages;
  const completed = await p.tx.runStage.update({
    where: { id: final.id },
    data: {
      state: 'completed',
      completedAt: p.now,
      lastHeartbeatAt: p.now,
      blockerReason: null,
      ...(p.body.summary !== undefined ? { summary: redactText(p.body.summary) } : {}),
    },
  });
  // Audited as the stage's own completion is (see `recordStage`), saying it came with the publication.
  p.auditEntries.push({
    workspaceId: p.invocation.workspaceId,
    projectId: p.invocation.projectId,
    actor: p.actor,
    action: 'stage.completed',
    targetType: 'run_stage',
    targetId: final.id,
    data: {
      invocation_id: p.invocation.id,
      stage_key: final.key,
      by: 'artifact_publication',
      duration_ms: final.firstAssignedAt ? p.now.getTime() - final.firstAssignedAt.getTime() : null,
    },
    requestId: p.requestId,
  });
  return [...stages.slice(0, -1), completed];
}

/** Where an envelope comes from: the contract, template, stages (as completed now), correlation and producer. */
function envelopeProvenance(
  invocation: Invocation,
  template: { key: string; version: string },
  stages: RunStage[],
  body: PublishBody,
) {
  return {
    contract_id: invocation.contractId,
    template: { key: template.key, version: template.version },
    stages: stages.map((s) => ({
      key: s.key,
      owner_agent_id: s.ownerAgentId,
      completed_at: s.completedAt ? s.completedAt.toISOString() : null,
    })),
    correlation_id: invocation.correlationId,
    producer: redactValue(body.provenance ?? {}) as object,
  };
}

/** A valid payload: the immutable envelope, the invocation `completed` and its run ended. */
async function storeEnvelope(p: Publication): Promise<Outcome> {
  const { tx, invocation, now } = p;
  const who = actorIdentity(p.actor);
  const stages = await completePublishingStage(p, p.stages);
  const artifact = await tx.artifact.create({
    data: {
      id: newId('art'),
      invocationId: invocation.id,
      runId: p.run.id,
      workspaceId: invocation.workspaceId,
      projectId: invocation.projectId,
      schemaId: p.schema.id,
      schemaName: p.schema.name,
      schemaVersion: p.schema.version,
      version: 1,
      summary: p.body.summary ?? '',
      payload: p.payload as never,
      payloadHash: p.payloadHash,
      provenance: envelopeProvenance(invocation, p.template, stages, p.body) as never,
      limitations: p.body.limitations ?? [],
      createdByKind: who.kind,
      createdById: who.id,
      createdAt: now,
    },
  });
  const completed = await tx.invocation.update({
    where: { id: invocation.id },
    data: { state: 'completed', attention: 'none', attentionReason: null, blockers: [], completedAt: now },
  });
  await tx.workflowRun.updateMany({
    where: { invocationId: invocation.id, endedAt: null },
    data: { state: 'ended', endedAt: now },
  });
  audit(p, 'artifact.published', { artifact_id: artifact.id, payload_sha256: p.payloadHash });
  audit(p, 'invocation.completed', { artifact_id: artifact.id });
  await writeAudit(p);
  p.deliveryJobs.push(
    ...(await recordDeliveryEvent(sqlOfPrisma(tx), completed, 'invocation.completed', artifact, now)),
  );
  return { kind: 'published', artifact, replayed: false };
}

/** What a publication needs to be written in one pass: everything it reads known, nothing to refuse. */
interface OnePassRequest {
  deps: WorkflowDeps;
  validators: ArtifactValidatorCache;
  actor: Actor;
  body: PublishBody;
  payload: unknown;
  payloadHash: string;
  requestId: string | undefined;
}

/**
 * The rows of a valid publication from what was read under the lock ({@link storeEnvelope}'s, written in one
 * statement), or null when the publication is anything else: a problem to answer, a replay, a payload to refuse,
 * a template or schema version this process has not read yet. Those take the transaction that handles every
 * case, which answers them from its own reads.
 */
async function onePassWrite(r: OnePassRequest, read: PublicationRead): Promise<PublicationWrite | null> {
  const { actor, body } = r;
  const { invocation, stages, run } = read;
  if (actor.kind === 'agent' && !stages.some((s) => s.ownerAgentId === actor.agentId)) return null;
  if (actor.kind !== 'agent' && body.evidence?.length) return null;
  if (read.artifactId !== null || !run) return null;
  if (invocation.state === 'failed' || invocation.state === 'cancelled') return null;
  const template = cachedInvocationTemplate(invocation);
  const pinned = template?.definition.artifact_schema;
  const schema = pinned
    ? cachedPinnedArtifactSchema(invocation.projectId, pinned.name, pinned.version)
    : undefined;
  if (!template || !schema) return null;
  if (!checkPayload(r.validators.get(schema), r.payload).valid) return null;

  const now = r.deps.now();
  const who = actorIdentity(actor);
  const entry = (action: string, targetType: string, targetId: string, data: Record<string, unknown>) => ({
    workspaceId: invocation.workspaceId,
    projectId: invocation.projectId,
    actor,
    action,
    targetType,
    targetId,
    data,
    requestId: r.requestId,
  });
  // As {@link completePublishingStage}: the final stage's owner brings its evidence and completes it when open.
  let evidence: PublicationWrite['evidence'] = null;
  let stageCompletion: PublicationWrite['stageCompletion'] = null;
  let provenanceStages = stages;
  const final = stages.at(-1);
  if (actor.kind === 'agent') {
    const owner = final?.ownerAgentId === actor.agentId;
    if (!owner && body.evidence?.length) return null;
    if (final && owner) {
      if (body.evidence?.length) {
        evidence = {
          stageId: final.id,
          agentId: actor.agentId,
          rows: evidenceBatchRows(final.id, actor.agentId, body.evidence, now),
        };
      }
      if ((OPEN_STAGE_STATES as readonly string[]).includes(final.state)) {
        stageCompletion = {
          stageId: final.id,
          summary: body.summary !== undefined ? redactText(body.summary) : undefined,
          event: entry('stage.completed', 'run_stage', final.id, {
            invocation_id: invocation.id,
            stage_key: final.key,
            by: 'artifact_publication',
            duration_ms: final.firstAssignedAt ? now.getTime() - final.firstAssignedAt.getTime() : null,
          }),
        };
        provenanceStages = [...stages.slice(0, -1), { ...final, completedAt: now }];
      }
    }
  }
  const artifactId = newId('art');
  const schemaLabel = `${schema.name}@${schema.version}`;
  const artifact = {
    id: artifactId,
    schemaId: schema.id,
    schemaName: schema.name,
    schemaVersion: schema.version,
  };
  const completed = { ...invocation, state: 'completed', attention: 'none', attentionReason: null };
  return {
    now,
    stageCompletion,
    evidence,
    artifact: {
      ...artifact,
      runId: run.id,
      workspaceId: invocation.workspaceId,
      summary: body.summary ?? '',
      payload: r.payload as never,
      payloadHash: r.payloadHash,
      provenance: envelopeProvenance(invocation, template, provenanceStages, body),
      limitations: body.limitations ?? [],
      createdByKind: who.kind,
      createdById: who.id,
    },
    events: [
      entry('artifact.published', 'invocation', invocation.id, {
        schema: schemaLabel,
        artifact_id: artifactId,
        payload_sha256: r.payloadHash,
      }),
      entry('invocation.completed', 'invocation', invocation.id, {
        schema: schemaLabel,
        artifact_id: artifactId,
      }),
    ],
    deliveries: {
      ids: read.subscriberIds.map((subscriptionId) => ({ id: newId('msg'), subscriptionId })),
      event: 'invocation.completed',
      body: deliveryBody('invocation.completed', completed, artifact, now),
    },
  };
}

/** The 422 for a refused payload, sent after its evidence is committed. */
function mismatch(outcome: Extract<Outcome, { kind: 'rejected' }>): AppError {
  return new AppError({
    status: 422,
    code: 'artifact_schema_mismatch',
    detail: `The payload does not conform to ${outcome.schema}; publication refused and the raw payload kept as evidence.`,
    extra: {
      evidence_id: outcome.evidenceId,
      errors: outcome.errors.map((e) => ({ location: `body/payload${e.path ?? ''}`, message: e.message })),
    },
  });
}

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
  // A valid payload is written in one pass (decision 102); anything else, or rows that changed under the lock,
  // takes the transaction below, which answers every case.
  const onePass = await publishUnderLock(
    deps.pool,
    deps.audit,
    { projectId: project.id, invocationId, event: 'invocation.completed' },
    (read) => onePassWrite({ deps, validators, actor, body, payload, payloadHash, requestId }, read),
  );
  if (onePass) {
    await deps.queue.announceInvocationChanges([invocationId]);
    await dispatchDeliveries(
      deps.db,
      deps.deliveries,
      onePass.deliveryIds.map((deliveryId) => ({ deliveryId, trigger: 'scheduled' as const, invocationId })),
    );
    return { artifact: onePass.artifact, replayed: false };
  }
  const deliveryJobs: DeliveryJob[] = [];
  const outcome = await deps.db.$transaction(
    async (tx): Promise<Outcome> => {
      const invocation = await lockInvocation(tx, invocationId);
      if (!invocation || invocation.projectId !== project.id) throw invocationNotFound(invocationId);
      // Under the lock, in one statement: the stages (who may publish, the final stage, the provenance), the
      // run and whether an artifact exists.
      const view = await readInvocationView(tx, project.id, invocationId);
      if (!view) throw invocationNotFound(invocationId);
      const { stages, run, artifact: published } = view.details;
      assertMayPublish(actor, stages);
      if (actor.kind !== 'agent' && body.evidence?.length) throw evidenceNotOwned();
      if (published) {
        const existing = await tx.artifact.findUnique({ where: { invocationId } });
        if (existing) return replayOf(existing, payloadHash);
      }
      const target = await publicationTarget(tx, project.id, invocation, run);
      const publication: Publication = {
        ...target,
        deps,
        tx,
        actor,
        invocation,
        body,
        payload,
        payloadHash,
        now: deps.now(),
        requestId,
        deliveryJobs,
        stages,
        auditEntries: [],
      };
      const check = checkPayload(validators.get(target.schema), payload);
      return check.valid ? storeEnvelope(publication) : recordRejection(publication, check.errors);
    },
    { timeout: 15_000, maxWait: 10_000 },
  );
  await deps.queue.announceInvocationChanges([invocationId]);
  await dispatchDeliveries(deps.db, deps.deliveries, deliveryJobs);
  if (outcome.kind === 'rejected') {
    // Too many rejections fail the invocation: its stages' hub handoffs are closed.
    await closeInvocationHandoffs(deps, invocationId);
    throw mismatch(outcome);
  }
  return { artifact: outcome.artifact, replayed: outcome.replayed };
}
