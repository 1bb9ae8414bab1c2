import type { Actor } from '@svc/auth';
import { workspaceOf, workspaceRoleOf } from '../auth/workspace-guard';
import type { HubDeps } from '../deps';
import {
  presentAgentSpawn,
  presentInternalAgentSpawn,
  presentProjectSpawnPolicy,
  presentSpawnReadiness,
  presentWorkspaceSpawnPolicy,
} from '../presenters/spawn';
import { deleteProjectSpawnPolicy } from '../use-cases/spawn/delete-project-spawn-policy';
import { getAgentSpawn } from '../use-cases/spawn/get-agent-spawn';
import { getSpawnPolicy } from '../use-cases/spawn/get-spawn-policy';
import { getSpawnReadiness } from '../use-cases/spawn/get-spawn-readiness';
import { listAgentSpawns } from '../use-cases/spawn/list-agent-spawns';
import { recordRelaySpawnEvent } from '../use-cases/spawn/record-relay-spawn-event';
import { requestAgentSpawn } from '../use-cases/spawn/request-agent-spawn';
import type { SpawnAuthorization } from '../use-cases/spawn/request-agent-spawn';
import { setSpawnPolicy } from '../use-cases/spawn/set-spawn-policy';
import type { SpawnPolicyInput } from '../use-cases/spawn/set-spawn-policy';
import { leaseMsOf } from '../use-cases/spawn/spawn-driver';
import type { SpawnDriver } from '../use-cases/spawn/spawn-driver';
import type { HubHandlers, HubInternalHandlers } from './types';
import { actorOf } from './types';

interface PolicyBody {
  enabled: boolean;
  allowed_models?: string[];
  allowed_capabilities?: string[];
  allowed_command_keys?: string[];
  max_running_agents_per_host?: number;
}

const policyInput = (body: PolicyBody): SpawnPolicyInput => ({
  enabled: body.enabled,
  allowedModels: body.allowed_models,
  allowedCapabilities: body.allowed_capabilities,
  allowedCommandKeys: body.allowed_command_keys,
  maxRunningAgentsPerHost: body.max_running_agents_per_host,
});

const authorizationOf = (actor: Actor, role: string | undefined): SpawnAuthorization =>
  actor.kind === 'participant' ? { source: 'participant', role: role ?? null } : { source: 'api_key' };

/** Spawn policies, agent spawns and the relays' spawn reports. */
export function spawnHandlers(
  deps: HubDeps,
  driver: SpawnDriver,
): HubHandlers<
  | 'getWorkspaceSpawnPolicy'
  | 'putWorkspaceSpawnPolicy'
  | 'getProjectSpawnPolicy'
  | 'putProjectSpawnPolicy'
  | 'deleteProjectSpawnPolicy'
  | 'createAgentSpawn'
  | 'listAgentSpawns'
  | 'getAgentSpawn'
  | 'recordRelaySpawnEvent'
> {
  return {
    async getWorkspaceSpawnPolicy(ctx) {
      const view = await getSpawnPolicy(deps, workspaceOf(ctx).id);
      return { status: 200, body: { data: presentWorkspaceSpawnPolicy(view) } };
    },
    async putWorkspaceSpawnPolicy(ctx) {
      const view = await setSpawnPolicy(
        deps,
        actorOf(ctx.actor),
        workspaceOf(ctx).id,
        undefined,
        policyInput(ctx.body),
        ctx.requestId,
      );
      return { status: 200, body: { data: presentWorkspaceSpawnPolicy(view) } };
    },
    async getProjectSpawnPolicy(ctx) {
      const view = await getSpawnPolicy(deps, workspaceOf(ctx).id, ctx.params.project);
      return { status: 200, body: { data: presentProjectSpawnPolicy(view) } };
    },
    async putProjectSpawnPolicy(ctx) {
      const view = await setSpawnPolicy(
        deps,
        actorOf(ctx.actor),
        workspaceOf(ctx).id,
        ctx.params.project,
        policyInput(ctx.body),
        ctx.requestId,
      );
      return { status: 200, body: { data: presentProjectSpawnPolicy(view) } };
    },
    async deleteProjectSpawnPolicy(ctx) {
      const view = await deleteProjectSpawnPolicy(
        deps,
        actorOf(ctx.actor),
        workspaceOf(ctx).id,
        ctx.params.project,
        ctx.requestId,
      );
      return { status: 200, body: { data: presentProjectSpawnPolicy(view) } };
    },
    async createAgentSpawn(ctx) {
      const actor = actorOf(ctx.actor);
      const workspace = workspaceOf(ctx);
      const { body } = ctx;
      const requested = await requestAgentSpawn(deps, {
        project: { workspaceId: workspace.id, ref: body.project },
        name: body.name,
        model: body.model,
        capabilities: body.capabilities ?? [],
        commandKey: body.command_key,
        serve: body.serve ?? false,
        origin: 'api',
        idempotencyKey: body.spawn_id,
        actor,
        authorization: authorizationOf(actor, workspaceRoleOf(ctx)),
        deadlineMs: driver.settings.deadlineMs,
        lease: { owner: driver.owner, ms: leaseMsOf(driver.settings) },
        requestId: ctx.requestId,
      });
      const ended = (state: string) => state === 'started' || state === 'failed';
      if (!requested.created) {
        if (!ended(requested.spawn.state)) driver.drive(requested.spawn.id);
        return {
          status: ended(requested.spawn.state) ? 200 : 202,
          body: { data: presentAgentSpawn(requested.spawn) },
        };
      }
      driver.drive(requested.spawn.id);
      await driver.settle(requested.spawn.id, driver.settings.waitMs);
      const spawn = await getAgentSpawn(deps, requested.spawn.id, workspace.id);
      return { status: ended(spawn.state) ? 201 : 202, body: { data: presentAgentSpawn(spawn) } };
    },
    async listAgentSpawns(ctx) {
      const spawns = await listAgentSpawns(deps, workspaceOf(ctx).id, {
        state: ctx.query.state,
        project: ctx.query.project,
        limit: ctx.query.limit,
      });
      return { status: 200, body: { data: spawns.map(presentAgentSpawn) } };
    },
    async getAgentSpawn(ctx) {
      const spawn = await getAgentSpawn(deps, ctx.params.spawnId, workspaceOf(ctx).id);
      return { status: 200, body: { data: presentAgentSpawn(spawn) } };
    },
    async recordRelaySpawnEvent(ctx) {
      const { body } = ctx;
      const recorded = await recordRelaySpawnEvent(deps, actorOf(ctx.actor), ctx.params.hostId, {
        spawnId: body.spawn_id,
        event: body.event,
        agentName: body.agent_name,
        agentId: body.agent_id,
        code: body.code,
        detail: body.detail,
        requestId: ctx.requestId,
      });
      return {
        status: 202,
        body: {
          data: {
            spawn_id: body.spawn_id,
            event: body.event,
            runtime_instance_id: recorded.runtimeInstanceId,
          },
        },
      };
    },
  };
}

/** Spawn readiness and spawns for the Workflow API (service actor only). */
export function internalSpawnHandlers(
  deps: HubDeps,
  driver: SpawnDriver,
): Pick<
  HubInternalHandlers,
  'getProjectSpawnReadiness' | 'createInternalAgentSpawn' | 'getInternalAgentSpawn'
> {
  return {
    async getProjectSpawnReadiness(ctx) {
      const capabilities = (ctx.query.capabilities ?? '')
        .split(',')
        .map((c) => c.trim())
        .filter(Boolean);
      const readiness = await getSpawnReadiness(deps, ctx.params.projectId, capabilities);
      return { status: 200, body: { data: presentSpawnReadiness(readiness) } };
    },
    async createInternalAgentSpawn(ctx) {
      const { body } = ctx;
      const requested = await requestAgentSpawn(deps, {
        project: { id: ctx.params.projectId },
        capabilities: body.capabilities,
        serve: false,
        origin: 'workflow',
        idempotencyKey: body.spawn_key,
        actor: actorOf(ctx.actor),
        authorization: { source: 'workflow_service', invocation_id: body.reason.invocation_id },
        reason: { invocation_id: body.reason.invocation_id, stage_key: body.reason.stage_key },
        deadlineMs: driver.settings.deadlineMs,
        lease: { owner: driver.owner, ms: leaseMsOf(driver.settings) },
        requestId: ctx.requestId,
      });
      const { spawn } = requested;
      if (spawn.state === 'requested' || spawn.state === 'in_progress') driver.drive(spawn.id);
      return { status: requested.created ? 201 : 200, body: { data: presentInternalAgentSpawn(spawn) } };
    },
    async getInternalAgentSpawn(ctx) {
      const spawn = await getAgentSpawn(deps, ctx.params.spawnId);
      return { status: 200, body: { data: presentInternalAgentSpawn(spawn) } };
    },
  };
}
