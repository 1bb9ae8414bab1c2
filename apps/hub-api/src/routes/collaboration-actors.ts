import type { Actor, AgentActor } from '@svc/auth';
import { AppError } from '@svc/service-kit';

/** Narrows to an agent; the contract already limits the actors of agent-side routes, so this is a type guard first. */
export function agentOf(actor: Actor | undefined): AgentActor {
  if (actor?.kind !== 'agent') {
    throw new AppError({
      status: 403,
      code: 'actor_not_allowed',
      detail: 'Only an agent, with its AGENT_TOKEN, can do this.',
    });
  }
  return actor;
}
