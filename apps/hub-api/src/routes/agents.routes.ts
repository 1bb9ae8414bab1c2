import { workspaceOf } from '../auth/workspace-guard';
import type { HubDeps } from '../deps';
import { presentProject } from '../presenters';
import { presentAgent, presentAgentOnboardHost, presentTeam } from '../presenters/teams-agents';
import { deleteAgent } from '../use-cases/delete-agent';
import { evictAgent } from '../use-cases/evict-agent';
import { findAgentFor, findSelfAgent } from '../use-cases/find-agent';
import { getAgentOnboard } from '../use-cases/get-agent-onboard';
import { listAgents } from '../use-cases/list-agents';
import { recordAgentHeartbeat } from '../use-cases/record-agent-heartbeat';
import { refreshAgentToken } from '../use-cases/refresh-agent-token';
import { registerAgent } from '../use-cases/register-agent';
import { AGENT_OPERATOR_ROLES } from '../use-cases/resource-access';
import { startAgent } from '../use-cases/start-agent';
import { stopAgent } from '../use-cases/stop-agent';
import type { HubHandlers } from './types';
import { actorOf } from './types';

/** Responses carrying a token must not be stored by any cache. */
const NO_STORE = { 'Cache-Control': 'no-store' };

export function agentHandlers(
  deps: HubDeps,
): HubHandlers<
  | 'listAgents'
  | 'registerAgent'
  | 'getAgent'
  | 'deleteAgent'
  | 'startAgent'
  | 'stopAgent'
  | 'evictAgent'
  | 'getAgentSelf'
  | 'getAgentOnboard'
  | 'recordAgentHeartbeat'
  | 'refreshAgentToken'
  | 'stopAgentSelf'
> {
  return {
    async listAgents(ctx) {
      const agents = await listAgents(deps, workspaceOf(ctx).id, {
        status: ctx.query.status,
        runtimeInstanceId: ctx.query.runtime_instance_id,
        teamId: ctx.query.team_id,
      });
      return { status: 200, body: { data: agents.map(presentAgent) } };
    },
    async registerAgent(ctx) {
      const { body } = ctx;
      const agent = await registerAgent(deps, actorOf(ctx.actor), workspaceOf(ctx), {
        name: body.name,
        capabilities: body.capabilities,
        runtimeInstanceId: body.runtime_instance_id,
        projectCode: body.project_code,
        workdir: body.workdir,
        worker: body.worker,
        teamId: body.team_id,
        servePort: body.serve_port,
        consoleRoute: body.console_route,
        model: body.model,
        requestId: ctx.requestId,
      });
      return { status: 201, body: { data: presentAgent(agent) } };
    },
    async getAgent(ctx) {
      const agent = await findAgentFor(deps, ctx.actor, ctx.params.agentId);
      return { status: 200, body: { data: presentAgent(agent) } };
    },
    async deleteAgent(ctx) {
      const actor = actorOf(ctx.actor);
      const agent = await findAgentFor(deps, actor, ctx.params.agentId, AGENT_OPERATOR_ROLES);
      await deleteAgent(deps, actor, agent, ctx.requestId);
      return { status: 204 };
    },
    async startAgent(ctx) {
      const actor = actorOf(ctx.actor);
      const agent = await findAgentFor(deps, actor, ctx.params.agentId, AGENT_OPERATOR_ROLES);
      const started = await startAgent(deps, actor, agent, {
        launchPath: ctx.body.launch_path,
        model: ctx.body.model,
        servePort: ctx.body.serve_port,
        requestId: ctx.requestId,
      });
      const credential = started.runtimeCredential;
      return {
        status: 200,
        body: {
          data: {
            agent: presentAgent(started.agent),
            agent_token: started.agentToken.token,
            agent_token_expires_at: started.agentToken.expiresAt.toISOString(),
            runtime_credential: {
              token: credential.token,
              expires_at: credential.expiresAt.toISOString(),
              provider: credential.provider,
              model: credential.model,
              authorization_source: credential.authorizationSource,
            },
          },
        },
        headers: NO_STORE,
      };
    },
    async stopAgent(ctx) {
      const actor = actorOf(ctx.actor);
      const agent = await findAgentFor(deps, actor, ctx.params.agentId, AGENT_OPERATOR_ROLES);
      return {
        status: 200,
        body: { data: presentAgent(await stopAgent(deps, actor, agent, ctx.requestId)) },
      };
    },
    async evictAgent(ctx) {
      const actor = actorOf(ctx.actor);
      const agent = await findAgentFor(deps, actor, ctx.params.agentId, AGENT_OPERATOR_ROLES);
      return {
        status: 200,
        body: { data: presentAgent(await evictAgent(deps, actor, agent, ctx.requestId)) },
      };
    },
    async getAgentSelf(ctx) {
      return { status: 200, body: { data: presentAgent(await findSelfAgent(deps, ctx.actor)) } };
    },
    async getAgentOnboard(ctx) {
      const onboard = await getAgentOnboard(deps, await findSelfAgent(deps, ctx.actor));
      return {
        status: 200,
        body: {
          data: {
            workspace: { id: onboard.workspace.id, slug: onboard.workspace.slug },
            agent: presentAgent(onboard.agent),
            host: onboard.host ? presentAgentOnboardHost(onboard.host) : null,
            agent_workdir_root: onboard.agentWorkdirRoot,
            teams: onboard.teams.map(presentTeam),
            projects: onboard.projects.map(presentProject),
            hub_url: onboard.hubUrl,
          },
        },
      };
    },
    async recordAgentHeartbeat(ctx) {
      const actor = actorOf(ctx.actor);
      const agent = await recordAgentHeartbeat(deps, actor, await findSelfAgent(deps, actor), {
        status: ctx.body?.status,
        requestId: ctx.requestId,
      });
      return { status: 200, body: { data: presentAgent(agent) } };
    },
    async refreshAgentToken(ctx) {
      const actor = actorOf(ctx.actor);
      const refreshed = await refreshAgentToken(deps, actor, await findSelfAgent(deps, actor), ctx.requestId);
      return {
        status: 200,
        body: {
          data: { agent_token: refreshed.token, agent_token_expires_at: refreshed.expiresAt.toISOString() },
        },
        headers: NO_STORE,
      };
    },
    async stopAgentSelf(ctx) {
      const actor = actorOf(ctx.actor);
      const agent = await stopAgent(deps, actor, await findSelfAgent(deps, actor), ctx.requestId);
      return { status: 200, body: { data: presentAgent(agent) } };
    },
  };
}
