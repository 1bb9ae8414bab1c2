import type { Actor } from '@svc/auth';
import { AppError, newId } from '@svc/service-kit';
import { isUniqueViolation } from '../../db';
import type { HubDeps } from '../../deps';
import type { Workspace } from '../../generated/prisma/client';
import { assertPlacementFree, lockHostPlacement } from '../../data/agents.locks';
import { announceConsoleRoutes } from '../../data/console-routes.notices';
import { announceRosterChanged } from '../../data/roster.notices';
import { defaultConsoleRoute, normalizeCapabilities, workdirUnderRoot } from '../../domain/agent-placement';
import { requireProviderModel } from '../../data/provider-models.lookups';
import { resolveRuntimeInstanceId } from '../../data/runtime-hosts.lookups';

export interface RegisterAgentInput {
  name: string;
  capabilities?: string[];
  runtimeInstanceId: string;
  projectCode?: string;
  workdir?: string;
  worker?: boolean;
  teamId?: string;
  servePort?: number;
  consoleRoute?: string;
  model?: string;
  requestId?: string;
}

const badRequest = (code: string, detail: string, extra?: Record<string, unknown>) =>
  new AppError({ status: 400, code, detail, extra });

/**
 * Registers an agent on a runtime host of the workspace (direct start rules 2, 3 and 5): the host is named
 * by its inventory id, the agent works either on a project or in a workdir inside the host's workdir root,
 * its serve port and console route are free on the host, and its model is an exact catalog identifier.
 * The agent starts `offline`; `POST /agents/{id}/start` brings it online. It is on its projects' rosters (not
 * running) from the commit, which is announced (decision 105).
 */
export async function registerAgent(
  deps: HubDeps,
  actor: Actor,
  workspace: Workspace,
  input: RegisterAgentInput,
) {
  if (input.projectCode !== undefined && input.workdir !== undefined) {
    throw badRequest(
      'project_and_workdir_exclusive',
      'Use project_code or workdir, never both: an agent works on a project or in a workdir.',
      { fields: ['project_code', 'workdir'] },
    );
  }
  if (input.projectCode === undefined && input.workdir === undefined) {
    throw badRequest('project_or_workdir_required', 'Give project_code or workdir (exactly one of them).', {
      fields: ['project_code', 'workdir'],
    });
  }
  if (input.worker && (input.projectCode === undefined || input.teamId === undefined)) {
    throw badRequest(
      'worker_requires_project_and_team',
      'A new worker needs both project_code and team_id.',
      {
        fields: ['project_code', 'team_id'],
      },
    );
  }

  const host = await resolveRuntimeInstanceId(deps.db, workspace.id, input.runtimeInstanceId);
  const project =
    input.projectCode === undefined
      ? null
      : await deps.db.project.findUnique({
          where: { workspaceId_code: { workspaceId: workspace.id, code: input.projectCode } },
        });
  if (input.projectCode !== undefined && !project) {
    throw badRequest('project_not_found', `No project with code '${input.projectCode}' in this workspace.`, {
      field: 'project_code',
    });
  }
  const team =
    input.teamId === undefined
      ? null
      : await deps.db.team.findFirst({ where: { id: input.teamId, workspaceId: workspace.id } });
  if (input.teamId !== undefined && !team) {
    throw badRequest('team_not_found', `No team '${input.teamId}' in this workspace.`, { field: 'team_id' });
  }
  const workdir = input.workdir === undefined ? null : workdirUnderRoot(input.workdir, host.workdirRoot);
  const model = input.model === undefined ? null : (await requireProviderModel(deps.db, input.model)).id;

  const id = newId('agt');
  const consoleRoute = input.consoleRoute ?? defaultConsoleRoute(workspace.slug, id);
  let registered;
  try {
    registered = await deps.db.$transaction(async (tx) => {
      await lockHostPlacement(tx, host.id);
      await assertPlacementFree(tx, { hostId: host.id, servePort: input.servePort, consoleRoute });
      const agent = await tx.agent.create({
        data: {
          id,
          workspaceId: workspace.id,
          name: input.name,
          status: 'offline',
          capabilities: normalizeCapabilities(input.capabilities),
          runtimeInstanceId: host.id,
          workdir,
          projectId: project?.id ?? null,
          servePort: input.servePort ?? null,
          consoleRoute,
          model,
        },
      });
      await deps.audit.record(
        {
          workspaceId: workspace.id,
          actor,
          action: 'agent.registered',
          targetType: 'agent',
          targetId: agent.id,
          data: {
            name: agent.name,
            runtime_instance_id: host.id,
            project_id: agent.projectId,
            workdir: agent.workdir,
            team_id: team?.id ?? null,
            worker: input.worker ?? false,
            serve_port: agent.servePort,
            console_route: agent.consoleRoute,
            model: agent.model,
            capabilities: agent.capabilities,
          },
          requestId: input.requestId,
        },
        tx,
      );
      if (team) {
        await tx.teamAgent.create({ data: { teamId: team.id, agentId: agent.id } });
        await deps.audit.record(
          {
            workspaceId: workspace.id,
            actor,
            action: 'team.agent_added',
            targetType: 'team',
            targetId: team.id,
            data: { agent_id: agent.id, agent_name: agent.name },
            requestId: input.requestId,
          },
          tx,
        );
      }
      return agent;
    });
  } catch (error) {
    if (isUniqueViolation(error)) {
      throw new AppError({
        status: 409,
        code: 'agent_name_taken',
        detail: `An agent named '${input.name}' already exists in this workspace; agent names are unique.`,
        extra: { field: 'name' },
      });
    }
    throw error;
  }
  if (registered.servePort !== null) await announceConsoleRoutes(deps, registered);
  await announceRosterChanged(deps, registered.workspaceId);
  return registered;
}
