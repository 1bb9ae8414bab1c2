import type { Actor } from '@svc/auth';
import { AppError } from '@svc/service-kit';
import type { ParticipantRole } from '@svc/service-kit';
import type { HubDeps } from '../deps';
import type { Agent } from '../generated/prisma/client';
import { assertResourceAccess } from './resources.access';

export const agentNotFound = (agentId: string) =>
  new AppError({ status: 404, code: 'agent_not_found', detail: `No agent '${agentId}'.` });

export const agentEvicted = (agentId: string, doing: string) =>
  new AppError({
    status: 409,
    code: 'agent_evicted',
    detail: `Agent '${agentId}' is evicted; eviction is final, so it cannot ${doing}. Register a new agent instead.`,
  });

/**
 * An agent the actor can see (an agent of another workspace, or a missing one, is not found); with
 * `roles`, a participant must also hold one of them in the agent's workspace.
 */
export async function findAgentFor(
  deps: HubDeps,
  actor: Actor | undefined,
  agentId: string,
  roles?: readonly ParticipantRole[],
): Promise<Agent> {
  const agent = await deps.db.agent.findUnique({ where: { id: agentId } });
  if (!agent) throw agentNotFound(agentId);
  await assertResourceAccess(deps.db, actor, agent.workspaceId, {
    notFound: () => agentNotFound(agentId),
    roles,
  });
  return agent;
}

/** The calling agent's id, without a read (agent-side routes accept the agent's own token only). */
export function selfAgentId(actor: Actor | undefined): string {
  if (actor?.kind !== 'agent') {
    throw new AppError({
      status: 403,
      code: 'actor_not_allowed',
      detail: "Only an agent's own AGENT_TOKEN can use this route.",
    });
  }
  return actor.agentId;
}

/** The calling agent's own row (agent-side routes accept the agent's own token only). */
export async function findSelfAgent(deps: HubDeps, actor: Actor | undefined): Promise<Agent> {
  const agentId = selfAgentId(actor);
  const agent = await deps.db.agent.findUnique({ where: { id: agentId } });
  if (!agent) throw agentNotFound(agentId);
  return agent;
}
