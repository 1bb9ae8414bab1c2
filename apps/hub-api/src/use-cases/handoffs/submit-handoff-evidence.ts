import type { AgentActor } from '@svc/auth';
import { AppError, newId, redactValue } from '@svc/service-kit';
import type { HubDeps } from '../../deps';
import { Prisma } from '../../generated/prisma/client';
import type { HandoffEvidence } from '../../generated/prisma/client';
import { loadHandoffForAgent } from '../../data/handoffs.lifecycle';
import { jsonDepth, MAX_EVIDENCE_BYTES, MAX_EVIDENCE_DEPTH } from '../../domain/handoff-evidence';
import { IN_PROGRESS_STATUSES } from '../../domain/handoff-states';

/**
 * The assignee submits evidence while it works on a handoff (accepted, claimed or blocked). The content is
 * redacted before it is stored — secret-named fields become `[REDACTED]` and token, key and credential
 * shapes inside strings are masked — so no secret ever reaches the database or a later reader.
 */
export async function submitHandoffEvidence(
  deps: HubDeps,
  actor: AgentActor,
  handoffId: string,
  input: { kind: string; content: unknown; requestId?: string },
): Promise<HandoffEvidence> {
  if (jsonDepth(input.content, MAX_EVIDENCE_DEPTH) > MAX_EVIDENCE_DEPTH) {
    throw new AppError({
      status: 400,
      code: 'evidence_too_deep',
      detail: `Evidence content may nest at most ${MAX_EVIDENCE_DEPTH} levels.`,
    });
  }
  const bytes = Buffer.byteLength(JSON.stringify(input.content) ?? 'null', 'utf8');
  if (bytes > MAX_EVIDENCE_BYTES) {
    throw new AppError({
      status: 413,
      code: 'evidence_too_large',
      detail: `Evidence content is ${bytes} bytes; at most ${MAX_EVIDENCE_BYTES} are accepted.`,
      extra: { limit_bytes: MAX_EVIDENCE_BYTES },
    });
  }
  const handoff = await loadHandoffForAgent(deps.db, actor, handoffId);
  if (!IN_PROGRESS_STATUSES.includes(handoff.status)) {
    throw new AppError({
      status: 409,
      code: 'handoff_not_in_progress',
      detail: `Handoff '${handoff.id}' is ${handoff.status}; evidence is accepted while it is ${IN_PROGRESS_STATUSES.join(', ')}.`,
      extra: { current_status: handoff.status },
    });
  }
  const redacted = redactValue(input.content, MAX_EVIDENCE_DEPTH + 1);
  return deps.db.$transaction(async (tx) => {
    const evidence = await tx.handoffEvidence.create({
      data: {
        id: newId('hev'),
        handoffId: handoff.id,
        agentId: actor.agentId,
        kind: input.kind,
        content: redacted === null ? Prisma.JsonNull : (redacted as Prisma.InputJsonValue),
        createdAt: deps.now(),
      },
    });
    await deps.audit.record(
      {
        workspaceId: handoff.workspaceId,
        actor,
        action: 'handoff.evidence_submitted',
        targetType: 'handoff',
        targetId: handoff.id,
        data: { evidence_id: evidence.id, kind: evidence.kind, bytes },
        requestId: input.requestId,
      },
      tx,
    );
    return evidence;
  });
}
