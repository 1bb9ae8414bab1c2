import type { Actor } from '@svc/auth';
import { findSelfAgent } from '../../data/agents.lookups';
import type { HubDeps } from '../../deps';

/**
 * What a starting agent needs: its workspace, its runtime host and the workdir root to use there (the
 * host's `workdirRoot`, the Networks server config value), its teams, and the projects it works on — its
 * own project and every project one of its teams is actively assigned to. For the calling agent only.
 */
export async function getAgentOnboard(deps: HubDeps, actor: Actor | undefined) {
  const agent = await findSelfAgent(deps, actor);
  const [workspace, host, memberships] = await Promise.all([
    deps.db.workspace.findUniqueOrThrow({ where: { id: agent.workspaceId } }),
    agent.runtimeInstanceId
      ? deps.db.runtimeHost.findUnique({ where: { id: agent.runtimeInstanceId } })
      : null,
    deps.db.teamAgent.findMany({
      where: { agentId: agent.id },
      include: { team: true },
      orderBy: { teamId: 'asc' },
    }),
  ]);
  const teams = memberships.map((m) => m.team);
  const projects = await deps.db.project.findMany({
    where: {
      workspaceId: agent.workspaceId,
      OR: [
        ...(agent.projectId ? [{ id: agent.projectId }] : []),
        { teams: { some: { teamId: { in: teams.map((t) => t.id) }, unassignedAt: null } } },
      ],
    },
    orderBy: { id: 'asc' },
  });
  return {
    workspace,
    agent,
    host,
    agentWorkdirRoot: host?.workdirRoot ?? null,
    teams,
    projects,
    hubUrl: deps.settings.publicUrl,
  };
}

export type AgentOnboard = Awaited<ReturnType<typeof getAgentOnboard>>;
