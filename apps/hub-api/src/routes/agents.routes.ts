import { workspaceOf } from '../auth/workspace-guard';
import type { HubDeps } from '../deps';
import {
  presentAgent,
  presentAgentOnboard,
  presentRuntimeCredential,
  presentStartedAgent,
} from '../presenters/agents';
import { deleteAgent } from '../use-cases/agents/delete-agent';
import { evictAgent } from '../use-cases/agents/evict-agent';
import { getAgent } from '../use-cases/agents/get-agent';
import { getAgentOnboard } from '../use-cases/agents/get-agent-onboard';
import { getAgentSelf } from '../use-cases/agents/get-agent-self';
import { listAgents } from '../use-cases/agents/list-agents';
import { recordAgentHeartbeat } from '../use-cases/agents/record-agent-heartbeat';
import { refreshAgentToken } from '../use-cases/agents/refresh-agent-token';
import { registerAgent } from '../use-cases/agents/register-agent';
import { startAgent } from '../use-cases/agents/start-agent';
import { stopAgent } from '../use-cases/agents/stop-agent';
import { refreshRuntimeCredential } from '../use-cases/providers/refresh-runtime-credential';
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
  | 'refreshRuntimeCredential'
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
      const agent = await getAgent(deps, ctx.actor, ctx.params.agentId);
      return { status: 200, body: { data: presentAgent(agent) } };
    },
    async deleteAgent(ctx) {
      await deleteAgent(deps, actorOf(ctx.actor), ctx.params.agentId, ctx.requestId);
      return { status: 204 };
    },
    async startAgent(ctx) {
      const started = await startAgent(deps, actorOf(ctx.actor), ctx.params.agentId, {
        launchPath: ctx.body.launch_path,
        model: ctx.body.model,
        servePort: ctx.body.serve_port,
        spawnId: ctx.body.spawn_id,
        requestId: ctx.requestId,
      });
      return { status: 200, body: { data: presentStartedAgent(started) }, headers: NO_STORE };
    },
    async stopAgent(ctx) {
      const agent = await stopAgent(deps, actorOf(ctx.actor), { agentId: ctx.params.agentId }, ctx.requestId);
      return { status: 200, body: { data: presentAgent(agent) } };
    },
    async evictAgent(ctx) {
      const agent = await evictAgent(deps, actorOf(ctx.actor), ctx.params.agentId, ctx.requestId);
      return { status: 200, body: { data: presentAgent(agent) } };
    },
    async getAgentSelf(ctx) {
      return { status: 200, body: { data: presentAgent(await getAgentSelf(deps, ctx.actor)) } };
    },
    async getAgentOnboard(ctx) {
      const onboard = await getAgentOnboard(deps, ctx.actor);
      return { status: 200, body: { data: presentAgentOnboard(onboard) } };
    },
    async recordAgentHeartbeat(ctx) {
      const agent = await recordAgentHeartbeat(deps, actorOf(ctx.actor), {
        status: ctx.body?.status,
        requestId: ctx.requestId,
      });
      return { status: 200, body: { data: presentAgent(agent) } };
    },
    async refreshAgentToken(ctx) {
      const refreshed = await refreshAgentToken(deps, actorOf(ctx.actor), ctx.requestId);
      return {
        status: 200,
        body: {
          data: { agent_token: refreshed.token, agent_token_expires_at: refreshed.expiresAt.toISOString() },
        },
        headers: NO_STORE,
      };
    },
    async refreshRuntimeCredential(ctx) {
      const credential = await refreshRuntimeCredential(deps, actorOf(ctx.actor), ctx.requestId);
      return { status: 200, body: { data: presentRuntimeCredential(credential) }, headers: NO_STORE };
    },
    async stopAgentSelf(ctx) {
      const agent = await stopAgent(deps, actorOf(ctx.actor), 'self', ctx.requestId);
      return { status: 200, body: { data: presentAgent(agent) } };
    },
  };
}
