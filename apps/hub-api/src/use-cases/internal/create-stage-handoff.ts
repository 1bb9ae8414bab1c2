import type { Actor } from '@svc/auth';
import { actorIdentity } from '@svc/auth';
import { AppError, newId, redactValue } from '@svc/service-kit';
import { agentEvicted } from '../../data/agents.lookups';
import { insertStageHandoff } from '../../data/stage-handoffs.insert';
import type { HubDeps } from '../../deps';
import {
  assigneeHostDraining,
  assigneeNotFound,
  handoffLockKey,
  projectNotInWorkspace,
} from '../handoffs/create-handoff';
import type { CreatedHandoff, HandoffReferenceInput } from '../handoffs/create-handoff';

/**
 * The handoff of a workflow stage for its owner, created once: a repeated call with the same reference and
 * assignee returns the handoff of the first call (`created: false`), whatever it has become since.
 *
 * The same rules as `createHandoff` in idempotent mode (the triple serialized by a transaction advisory lock,
 * the project and the assignee checked, no handoff for an agent of a draining host, the `handoff.created`
 * audit event in the same transaction), in four statements instead of ten (decision 97); and one more: a new
 * stage handoff needs an assignee that is running (409 `agent_not_running` for a stopped or lost one), so a
 * worker that planned with a roster read before the agent stopped tries its next candidate (decision 108).
 */
export async function createStageHandoff(
  deps: HubDeps,
  actor: Actor,
  input: {
    workspaceId: string;
    projectId: string;
    assigneeAgentId: string;
    title: string;
    description?: string;
    reference: HandoffReferenceInput;
    requestId?: string;
  },
): Promise<CreatedHandoff> {
  const { workspaceId, projectId, assigneeAgentId, reference } = input;
  const creator = actorIdentity(actor);
  const id = newId('hof');
  const outcome = await insertStageHandoff(deps.pool, {
    lockKey: handoffLockKey(workspaceId, reference, assigneeAgentId),
    workspaceId,
    projectId,
    assigneeAgentId,
    referenceKind: reference.kind,
    referenceId: reference.id,
    referenceData: reference.data ?? {},
    id,
    title: input.title.trim(),
    description: input.description ?? '',
    createdByKind: creator.kind,
    createdById: creator.id,
    at: deps.now(),
    audit: {
      id: newId('aud'),
      data: redactValue({
        project_id: projectId,
        assignee_agent_id: assigneeAgentId,
        reference_kind: reference.kind,
        reference_id: reference.id,
      }) as Record<string, unknown>,
      requestId: input.requestId ?? null,
    },
  });
  switch (outcome.kind) {
    case 'created':
      return { handoff: outcome.handoff, created: true };
    case 'existing':
      return { handoff: outcome.handoff, created: false };
    case 'workspace_not_found':
      throw new AppError({
        status: 404,
        code: 'workspace_not_found',
        detail: `No workspace '${workspaceId}'.`,
      });
    case 'project_not_found':
      throw projectNotInWorkspace(projectId);
    case 'assignee_not_found':
      throw assigneeNotFound(assigneeAgentId);
    case 'assignee_evicted':
      throw agentEvicted(assigneeAgentId, 'be assigned a handoff');
    case 'assignee_not_running':
      throw new AppError({
        status: 409,
        code: 'agent_not_running',
        detail: `Agent '${assigneeAgentId}' is ${outcome.status}, not running: it takes no new work.`,
        extra: { agent_status: outcome.status },
      });
    case 'host_draining':
      throw assigneeHostDraining(assigneeAgentId, outcome.hostId);
  }
}
