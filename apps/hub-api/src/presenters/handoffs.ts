import type { HubApi, HubInternalApi } from '@svc/contracts';
import type { Handoff, HandoffEvidence } from '../generated/prisma/client';

type Schemas = HubApi.components['schemas'];

const iso = (d: Date) => d.toISOString();
const isoOrNull = (d: Date | null) => (d ? d.toISOString() : null);

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function presentHandoff(h: Handoff): Schemas['Handoff'] {
  return {
    id: h.id,
    workspace_id: h.workspaceId,
    project_id: h.projectId,
    title: h.title,
    description: h.description,
    status: h.status,
    assignee_agent_id: h.assigneeAgentId,
    // Rows are written by createHandoff, whose creator kinds are exactly the contract's enum.
    created_by: { kind: h.createdByKind as Schemas['HandoffActorRef']['kind'], id: h.createdById },
    reference:
      h.referenceKind !== null && h.referenceId !== null
        ? {
            kind: h.referenceKind,
            id: h.referenceId,
            data: isRecord(h.referenceData) ? h.referenceData : {},
          }
        : null,
    blocker_reason: h.blockerReason,
    created_at: iso(h.createdAt),
    updated_at: iso(h.updatedAt),
    accepted_at: isoOrNull(h.acceptedAt),
    claimed_at: isoOrNull(h.claimedAt),
    blocked_at: isoOrNull(h.blockedAt),
    completed_at: isoOrNull(h.completedAt),
    cancelled_at: isoOrNull(h.cancelledAt),
  };
}

/** The same record for the internal API (structurally identical to the public `Handoff`). */
export function presentStageHandoff(h: Handoff): HubInternalApi.components['schemas']['StageHandoff'] {
  return presentHandoff(h);
}

export function presentHandoffEvidence(e: HandoffEvidence): Schemas['HandoffEvidence'] {
  return {
    id: e.id,
    handoff_id: e.handoffId,
    agent_id: e.agentId,
    kind: e.kind,
    content: e.content,
    created_at: iso(e.createdAt),
  };
}

export function presentHandoffDetail(h: Handoff & { evidence: HandoffEvidence[] }): Schemas['HandoffDetail'] {
  return { ...presentHandoff(h), evidence: h.evidence.map(presentHandoffEvidence) };
}
