import type { Actor, AgentActor, ParticipantActor } from '@svc/auth';
import type { HubApi, HubInternalApi } from '@svc/contracts';
import { AppError } from '@svc/service-kit';
import type { OperationHandlers } from '@svc/service-kit';

export type HubOperations = HubApi.operations;
export type HubHandlers<K extends keyof HubOperations> = Pick<OperationHandlers<HubOperations>, K>;
export type HubInternalHandlers = OperationHandlers<HubInternalApi.operations>;

/** Narrows to a participant; the contract already limits the actors, so this is a type guard first. */
export function participantOf(actor: Actor | undefined): ParticipantActor {
  if (actor?.kind !== 'participant') {
    throw new AppError({
      status: 403,
      code: 'actor_not_allowed',
      detail: 'Only a signed-in participant can do this.',
    });
  }
  return actor;
}

export function actorOf(actor: Actor | undefined): Actor {
  if (!actor) throw new AppError({ status: 401, code: 'credential_missing', detail: 'Send a credential.' });
  return actor;
}

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
