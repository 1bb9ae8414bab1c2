import type { HubApi } from '@svc/contracts';
import type { Agent, RuntimeHost } from '../generated/prisma/client';
import type { AgentOnboard } from '../use-cases/agents/get-agent-onboard';
import type { StartedAgent } from '../use-cases/agents/start-agent';
import type { RuntimeCredential } from '../use-cases/providers/issue-runtime-credential';
import { presentProject } from './projects';
import { presentTeam } from './teams';

type Schemas = HubApi.components['schemas'];

const iso = (d: Date) => d.toISOString();
const isoOrNull = (d: Date | null) => (d ? d.toISOString() : null);

export function presentAgent(a: Agent): Schemas['Agent'] {
  return {
    id: a.id,
    workspace_id: a.workspaceId,
    name: a.name,
    status: a.status,
    capabilities: a.capabilities,
    runtime_instance_id: a.runtimeInstanceId,
    project_id: a.projectId,
    workdir: a.workdir,
    serve_port: a.servePort,
    console_route: a.consoleRoute,
    model: a.model,
    last_heartbeat_at: isoOrNull(a.lastHeartbeatAt),
    console_last_activity_at: isoOrNull(a.consoleLastActivityAt),
    started_at: isoOrNull(a.startedAt),
    stopped_at: isoOrNull(a.stoppedAt),
    evicted_at: isoOrNull(a.evictedAt),
    created_at: iso(a.createdAt),
    updated_at: iso(a.updatedAt),
  };
}

export function presentAgentOnboardHost(h: RuntimeHost): Schemas['AgentOnboardHost'] {
  return {
    id: h.id,
    name: h.name,
    workdir_root: h.workdirRoot,
    console_public_base_url: h.consolePublicBaseUrl,
  };
}

/** What a starting agent needs to know about its workspace, host, teams and projects. */
export function presentAgentOnboard(onboard: AgentOnboard): Schemas['AgentOnboard'] {
  return {
    workspace: { id: onboard.workspace.id, slug: onboard.workspace.slug },
    agent: presentAgent(onboard.agent),
    host: onboard.host ? presentAgentOnboardHost(onboard.host) : null,
    agent_workdir_root: onboard.agentWorkdirRoot,
    teams: onboard.teams.map(presentTeam),
    projects: onboard.projects.map(presentProject),
    hub_url: onboard.hubUrl,
  };
}

/** A runtime credential as its holder receives it (once, never stored). */
export function presentRuntimeCredential(credential: RuntimeCredential): Schemas['AgentRuntimeCredential'] {
  return {
    token: credential.token,
    expires_at: credential.expiresAt.toISOString(),
    provider: credential.provider,
    model: credential.model,
    authorization_source: credential.authorizationSource,
  };
}

/** A started agent with its new AGENT_TOKEN and runtime credential (returned once, never stored). */
export function presentStartedAgent(started: StartedAgent): Schemas['AgentStartResult'] {
  return {
    agent: presentAgent(started.agent),
    agent_token: started.agentToken.token,
    agent_token_expires_at: started.agentToken.expiresAt.toISOString(),
    runtime_credential: presentRuntimeCredential(started.runtimeCredential),
  };
}
