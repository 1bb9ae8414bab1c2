import type { Actor } from '@svc/auth';
import { AppError } from '@svc/service-kit';
import type { HubDeps } from '../../deps';
import type { Agent } from '../../generated/prisma/client';
import { assertPlacementFree, lockAgent, lockHostPlacement } from '../../data/agents.locks';
import { announceConsoleRoutes } from '../../data/console-routes.notices';
import { announceRosterChanged } from '../../data/roster.notices';
import { isWorkdirUnderRoot } from '../../domain/agent-placement';
import { agentEvicted, agentNotFound, findAgentFor } from '../../data/agents.lookups';
import { AGENT_OPERATOR_ROLES } from '../../domain/roles';
import { hostReadiness, isRunning } from '../../domain/host-readiness';
import { issueAgentToken } from './issue-agent-token';
import { issueRuntimeCredential } from '../providers/issue-runtime-credential';
import type { LaunchPath, RuntimeCredential } from '../providers/issue-runtime-credential';
import { requireProviderModel } from '../../data/provider-models.lookups';

export interface StartAgentInput {
  launchPath: LaunchPath;
  model?: string;
  servePort?: number;
  /** The relay spawn this start belongs to (relay launch path only); recorded in the start's audit events. */
  spawnId?: string;
  requestId?: string;
}

export interface StartedAgent {
  agent: Agent;
  agentToken: { token: string; expiresAt: Date };
  runtimeCredential: RuntimeCredential;
}

const hostNotReady = (detail: string, extra: Record<string, unknown>) =>
  new AppError({ status: 409, code: 'runtime_host_not_ready', detail, extra });

/**
 * Starts an agent by a direct CLI start or a relay spawn (spec: Agent states, direct start rules 6–8). The
 * agent must not be evicted or already running; its runtime host must have a fresh heartbeat and, for a
 * relay spawn, a ready relay; its workdir must still be inside the host's workdir root. The agent becomes
 * `online` and gets a new AGENT_TOKEN and exactly one runtime credential, both returned once. The row is
 * locked while the credential is issued, so concurrent starts of one agent cannot both succeed. The start is
 * announced after the commit (the agent is running on its projects' rosters; decision 105).
 */
export async function startAgent(
  deps: HubDeps,
  actor: Actor,
  agentId: string,
  input: StartAgentInput,
): Promise<StartedAgent> {
  if (input.spawnId !== undefined && input.launchPath !== 'relay') {
    throw new AppError({
      status: 400,
      code: 'spawn_id_requires_relay',
      detail: 'spawn_id names a relay spawn: send it with launch_path relay only.',
      extra: { field: 'spawn_id' },
    });
  }
  const target = await findAgentFor(deps, actor, agentId, AGENT_OPERATOR_ROLES);
  if (target.status === 'evicted') throw agentEvicted(target.id, 'be started');
  const requested = input.model ?? target.model;
  if (!requested) {
    throw new AppError({
      status: 400,
      code: 'model_required',
      detail:
        'The agent has no model: pass model, an exact provider/model identifier from the current catalog (no aliases).',
      extra: { field: 'model' },
    });
  }
  const model = await requireProviderModel(deps.db, requested);

  const started = await deps.db.$transaction(
    async (tx) => {
      const agent = await lockAgent(tx, target.id);
      if (!agent) throw agentNotFound(target.id);
      if (agent.status === 'evicted') throw agentEvicted(agent.id, 'be started');
      const now = deps.now();
      if (isRunning(agent, now)) {
        throw new AppError({
          status: 409,
          code: 'agent_already_running',
          detail: `Agent '${agent.name}' is ${agent.status} with a fresh heartbeat; stop it before starting it again.`,
          extra: { current_status: agent.status },
        });
      }
      const host = agent.runtimeInstanceId
        ? await tx.runtimeHost.findUnique({ where: { id: agent.runtimeInstanceId } })
        : null;
      if (!host) {
        throw hostNotReady(`Agent '${agent.name}' has no runtime host; register it on a host (rti_…).`, {
          reasons: ['the agent has no runtime host'],
        });
      }
      const readiness = hostReadiness(host, now);
      const ready = input.launchPath === 'relay' ? readiness.spawn_ready : readiness.heartbeat_fresh;
      if (!ready) {
        throw hostNotReady(
          input.launchPath === 'relay'
            ? `Runtime host '${host.id}' is not spawn ready (it needs a fresh heartbeat and a ready relay): ${readiness.reasons.join('; ')}.`
            : `Runtime host '${host.id}' has no fresh heartbeat: ${readiness.reasons.join('; ')}. Start the runtime (svc runtime up) on the host first.`,
          { runtime_instance_id: host.id, reasons: readiness.reasons, readiness },
        );
      }
      if (agent.workdir !== null && !isWorkdirUnderRoot(agent.workdir, host.workdirRoot)) {
        throw new AppError({
          status: 409,
          code: 'workdir_outside_root',
          detail: `Agent '${agent.name}' has workdir '${agent.workdir}', which is no longer inside the host's workdir_root '${host.workdirRoot}'; register the agent again with a workdir under it.`,
          extra: { workdir_root: host.workdirRoot },
        });
      }
      const servePort = input.servePort ?? agent.servePort;
      if (input.servePort !== undefined && input.servePort !== agent.servePort) {
        await lockHostPlacement(tx, host.id);
        await assertPlacementFree(tx, { hostId: host.id, agentId: agent.id, servePort: input.servePort });
      }
      const runtimeCredential = await issueRuntimeCredential(deps, {
        agent: { ...agent, model: model.id, servePort },
        model: model.id,
        launchPath: input.launchPath,
        ...(input.spawnId !== undefined ? { spawnId: input.spawnId } : {}),
        actor,
        requestId: input.requestId,
      });
      const updated = await tx.agent.update({
        where: { id: agent.id },
        data: {
          status: 'online',
          startedAt: now,
          lastHeartbeatAt: now,
          stoppedAt: null,
          model: model.id,
          servePort,
        },
      });
      await deps.audit.record(
        {
          workspaceId: agent.workspaceId,
          actor,
          action: 'agent.started',
          targetType: 'agent',
          targetId: agent.id,
          data: {
            launch_path: input.launchPath,
            ...(input.spawnId !== undefined ? { spawn_id: input.spawnId } : {}),
            previous_status: agent.status,
            runtime_instance_id: host.id,
            model: model.id,
            serve_port: servePort,
            runtime_credential_id: runtimeCredential.credentialId,
            authorization_source: runtimeCredential.authorizationSource,
          },
          requestId: input.requestId,
        },
        tx,
      );
      return { agent: updated, runtimeCredential };
    },
    { timeout: 15_000 },
  );
  await announceConsoleRoutes(deps, started.agent);
  await announceRosterChanged(deps, started.agent.workspaceId);
  const issued = issueAgentToken(deps, started.agent);
  return {
    agent: started.agent,
    agentToken: { token: issued.token, expiresAt: issued.expiresAt },
    runtimeCredential: started.runtimeCredential,
  };
}
