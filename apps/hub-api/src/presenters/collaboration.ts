import type { HubApi, HubInternalApi } from '@svc/contracts';
import type {
  Handoff,
  HandoffEvidence,
  Message,
  Repo,
  RepoCredential,
  WorkflowDraft,
} from '../generated/prisma/client';

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

/** A repo with what is known about its credential; the sealed secret is never part of it. */
export function presentRepo(r: Repo & { credential: RepoCredential | null }): Schemas['Repo'] {
  const c = r.credential;
  return {
    id: r.id,
    workspace_id: r.workspaceId,
    name: r.name,
    url: r.url,
    credential: c
      ? {
          kind: c.kind as Schemas['RepoCredentialKind'],
          fingerprint: c.fingerprint,
          set_at: iso(c.setAt),
          rotated_at: isoOrNull(c.rotatedAt),
        }
      : null,
    created_at: iso(r.createdAt),
  };
}

export function presentWorkflowDraft(d: WorkflowDraft): Schemas['ControlWorkflowDraft'] {
  return {
    id: d.id,
    workspace_id: d.workspaceId,
    project_id: d.projectId,
    title: d.title,
    intent: d.intent,
    status: 'draft',
    created_by: d.createdById,
    created_at: iso(d.createdAt),
  };
}

export function presentPeerMessage(m: Message): Schemas['PeerMessage'] {
  return {
    id: m.id,
    workspace_id: m.workspaceId,
    to_agent_id: m.toAgentId,
    from: { kind: m.fromKind as Schemas['PeerMessage']['from']['kind'], id: m.fromId },
    kind: m.kind as Schemas['PeerMessageKind'],
    body: m.body,
    correlation_id: m.correlationId,
    created_at: iso(m.createdAt),
    read_at: isoOrNull(m.readAt),
  };
}
