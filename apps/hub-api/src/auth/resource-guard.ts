import type { OperationGuard } from '@svc/service-kit';
import type { HubDeps } from '../deps';
import { findAgentFor } from '../data/agents.lookups';
import { loadHandoffForAgent } from '../data/handoffs.lifecycle';
import { findProjectFor } from '../data/projects.lookups';
import { findRepoFor } from '../data/repos.lookups';

type Params = Record<string, unknown>;

/**
 * Operations addressed by a resource id that take a body: the resource must be one the caller can see
 * before the body is validated (decision 4), so a caller of another workspace gets the resource's 404 and
 * learns nothing from validation errors; a participant also needs one of the operation's roles
 * (`x-svc-participant-roles`). The handlers load the resource again for their own checks.
 */
const CHECKS: Record<string, (deps: HubDeps, ctx: Parameters<OperationGuard>[0]) => Promise<unknown>> = {
  blockHandoff: (deps, ctx) => handoffOfAgent(deps, ctx),
  submitHandoffEvidence: (deps, ctx) => handoffOfAgent(deps, ctx),
  setRepoCredential: (deps, ctx) =>
    findRepoFor(deps.db, ctx.actor, String((ctx.params as Params).repoId), ctx.operation.participantRoles),
  sendAgentMessage: (deps, ctx) =>
    findAgentFor(deps, ctx.actor, String((ctx.params as Params).agentId), ctx.operation.participantRoles),
  startAgent: (deps, ctx) =>
    findAgentFor(deps, ctx.actor, String((ctx.params as Params).agentId), ctx.operation.participantRoles),
  assignProjectTeam: (deps, ctx) =>
    findProjectFor(deps, ctx.actor, String((ctx.params as Params).projectId), ctx.operation.participantRoles),
  updateProject: (deps, ctx) =>
    findProjectFor(deps, ctx.actor, String((ctx.params as Params).projectId), ctx.operation.participantRoles),
};

async function handoffOfAgent(deps: HubDeps, ctx: Parameters<OperationGuard>[0]): Promise<unknown> {
  // The router admits agents only here; an agent of another workspace gets 404 `handoff_not_found`.
  if (ctx.actor?.kind !== 'agent') return undefined;
  return loadHandoffForAgent(deps.db, ctx.actor, String((ctx.params as Params).handoffId));
}

export function resourceGuard(deps: HubDeps): OperationGuard {
  return async (ctx) => {
    await CHECKS[ctx.operation.operationId]?.(deps, ctx);
  };
}

/** The operations the guard checks, for the tests that hold it to the contract. */
export const RESOURCE_GUARDED_OPERATIONS = Object.keys(CHECKS);
