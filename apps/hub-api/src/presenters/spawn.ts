import type { HubApi, HubInternalApi } from '@svc/contracts';
import type { AgentSpawnView } from '../data/spawn.lookups';
import { rulesOf } from '../domain/spawn-policy';
import type { SpawnPolicy } from '../generated/prisma/client';
import type { SpawnPolicyView } from '../use-cases/spawn/get-spawn-policy';
import type { SpawnReadiness } from '../use-cases/spawn/get-spawn-readiness';

type Schemas = HubApi.components['schemas'];
type InternalSchemas = HubInternalApi.components['schemas'];

const isoOrNull = (d: Date | null) => (d ? d.toISOString() : null);

/** A stored policy, or the default (off) of a workspace that never set one. */
function presentPolicy(row: SpawnPolicy | null, workspaceId: string): Schemas['SpawnPolicy'] {
  const rules = rulesOf(row);
  return {
    scope: row?.projectId ? 'project' : 'workspace',
    workspace_id: workspaceId,
    project_id: row?.projectId ?? null,
    stored: row !== null,
    enabled: rules.enabled,
    allowed_models: rules.allowedModels,
    allowed_capabilities: rules.allowedCapabilities,
    allowed_command_keys: rules.allowedCommandKeys,
    max_running_agents_per_host: rules.maxRunningAgentsPerHost,
    updated_at: isoOrNull(row?.updatedAt ?? null),
    updated_by: row?.updatedById ?? null,
  };
}

export function presentWorkspaceSpawnPolicy(view: SpawnPolicyView): Schemas['SpawnPolicy'] {
  return presentPolicy(view.workspacePolicy, view.workspaceId);
}

export function presentProjectSpawnPolicy(view: SpawnPolicyView): Schemas['ProjectSpawnPolicy'] {
  if (!view.project) throw new Error('presentProjectSpawnPolicy: the policies were not read for a project');
  return {
    project_id: view.project.id,
    project_code: view.project.code,
    override: view.projectPolicy ? presentPolicy(view.projectPolicy, view.workspaceId) : null,
    effective: presentPolicy(view.effective, view.workspaceId),
  };
}

function failureOf(s: AgentSpawnView): Schemas['AgentSpawnFailure'] | null {
  if (s.errorCode === null) return null;
  return {
    code: s.errorCode,
    detail: s.errorDetail,
    rule: s.errorRule,
    cli_code: s.errorCliCode,
    status: s.errorStatus,
  };
}

/** A spawn as the public API shows it: never the relay token (the hub does not store it on the spawn). */
export function presentAgentSpawn(s: AgentSpawnView): Schemas['AgentSpawn'] {
  const requestedBy = s.requestedBy as { kind: string; id: string | null };
  const authorization = s.authorization as Schemas['AgentSpawn']['authorization'];
  return {
    id: s.id,
    workspace_id: s.workspaceId,
    project_id: s.projectId,
    project_code: s.project.code,
    runtime_instance_id: s.runtimeInstanceId,
    state: s.state,
    name: s.name,
    model: s.model,
    capabilities: s.capabilities,
    command_key: s.commandKey,
    serve: s.serve,
    idempotency_key: s.idempotencyKey,
    agent_id: s.agentId,
    pid: s.pid,
    serve_port: s.servePort,
    error: failureOf(s),
    attempts: s.attempts,
    requested_by: { kind: requestedBy.kind, id: requestedBy.id },
    authorization,
    reason: (s.reason as Record<string, unknown> | null) ?? null,
    created_at: s.createdAt.toISOString(),
    updated_at: s.updatedAt.toISOString(),
    started_at: isoOrNull(s.startedAt),
    finished_at: isoOrNull(s.finishedAt),
  };
}

export function presentInternalAgentSpawn(s: AgentSpawnView): InternalSchemas['InternalAgentSpawn'] {
  const error = failureOf(s);
  return {
    id: s.id,
    workspace_id: s.workspaceId,
    project_id: s.projectId,
    runtime_instance_id: s.runtimeInstanceId,
    state: s.state,
    name: s.name,
    model: s.model,
    capabilities: s.capabilities,
    spawn_key: s.idempotencyKey,
    agent_id: s.agentId,
    error: error && { code: error.code, detail: error.detail, rule: error.rule, cli_code: error.cli_code },
    attempts: s.attempts,
    reason: (s.reason as Record<string, unknown> | null) ?? null,
    created_at: s.createdAt.toISOString(),
    updated_at: s.updatedAt.toISOString(),
    started_at: isoOrNull(s.startedAt),
    finished_at: isoOrNull(s.finishedAt),
  };
}

export function presentSpawnReadiness(r: SpawnReadiness): InternalSchemas['SpawnReadiness'] {
  return {
    allowed: r.allowed,
    model: r.model,
    runtime_instance_id: r.runtimeInstanceId,
    command_key: r.commandKey,
    blockers: r.blockers,
  };
}
