import { announceRosterChanged } from '../../data/roster.notices';
import type { HubDeps } from '../../deps';
import { AGENT_HEARTBEAT_FRESH_SECONDS, HOST_LOST_SECONDS } from '../../domain/host-readiness';

/** Namespace of the advisory lock that lets one hub replica at a time run the presence sweep. */
const PRESENCE_LOCK = [0x5a3b2, 1] as const;

export interface PresenceSweep {
  /** False when another replica held the sweep's lock (this pass did nothing). */
  ran: boolean;
  /** Hosts found silent past {@link HOST_LOST_SECONDS}, marked lost by this pass. */
  hosts: string[];
  /** Running agents marked `lost` by this pass (their host or their own heartbeat went silent). */
  agents: string[];
}

interface LostHost {
  id: string;
  workspace_id: string;
  last_heartbeat_at: Date;
}

interface LostAgent {
  id: string;
  workspace_id: string;
  runtime_instance_id: string | null;
  last_heartbeat_at: Date;
  previous_status: string;
  host_silent: boolean;
}

/**
 * One pass of the presence sweep: a host whose last heartbeat is older than {@link HOST_LOST_SECONDS} is marked
 * lost, and every running agent (online, idle, busy) on such a host, or whose own heartbeat is older than
 * {@link AGENT_HEARTBEAT_FRESH_SECONDS}, becomes `lost` — a state apart from a clean stop (`offline`), which the
 * roster does not count as running, so the workflow engine gives the agent's stages to other owners. Each
 * change is audited (`runtime_host.lost`, `agent.lost`). A heartbeat undoes it (the host's clears `lost_at`, the
 * agent's makes it running again).
 *
 * Safe with several hub replicas: the pass runs under a transaction-scoped advisory lock taken with `try`
 * (a replica that finds it held skips the pass), and each update changes only rows not already marked, so a row
 * is marked, and audited, once.
 *
 * After the commit, each workspace with an agent marked lost is announced (its rosters changed; decision 105),
 * so the engine releases a lost owner's stage without waiting for its roster's time limit.
 */
export async function markLostAgents(
  deps: Pick<HubDeps, 'db' | 'audit' | 'now' | 'notices'>,
): Promise<PresenceSweep> {
  const now = deps.now();
  const hostCut = new Date(now.getTime() - HOST_LOST_SECONDS * 1000);
  const agentCut = new Date(now.getTime() - AGENT_HEARTBEAT_FRESH_SECONDS * 1000);
  const workspaces = new Set<string>();
  const sweep = await deps.db.$transaction(
    async (tx) => {
      const [lock] = await tx.$queryRaw<{ taken: boolean }[]>`
        SELECT pg_try_advisory_xact_lock(${PRESENCE_LOCK[0]}::int4, ${PRESENCE_LOCK[1]}::int4) AS taken`;
      if (!lock?.taken) return { ran: false, hosts: [], agents: [] };
      const hosts = await tx.$queryRaw<LostHost[]>`
        UPDATE runtime_hosts SET lost_at = ${now}
        WHERE lost_at IS NULL AND last_heartbeat_at IS NOT NULL AND last_heartbeat_at < ${hostCut}
        RETURNING id, workspace_id, last_heartbeat_at`;
      const agents = await tx.$queryRaw<LostAgent[]>`
        WITH lost AS (
          SELECT a.id, a.status::text AS previous_status,
                 (h.last_heartbeat_at IS NOT NULL AND h.last_heartbeat_at < ${hostCut}) AS host_silent
          FROM agents a LEFT JOIN runtime_hosts h ON h.id = a.runtime_instance_id
          WHERE a.status IN ('online', 'idle', 'busy')
            AND ((h.last_heartbeat_at IS NOT NULL AND h.last_heartbeat_at < ${hostCut})
              OR a.last_heartbeat_at IS NULL OR a.last_heartbeat_at < ${agentCut})
          FOR UPDATE OF a SKIP LOCKED)
        UPDATE agents a SET status = 'lost'::"AgentStatus", lost_at = ${now}, updated_at = ${now}
        FROM lost WHERE a.id = lost.id
        RETURNING a.id, a.workspace_id, a.runtime_instance_id, a.last_heartbeat_at, lost.previous_status,
                  lost.host_silent`;
      for (const host of hosts) {
        await deps.audit.record(
          {
            workspaceId: host.workspace_id,
            action: 'runtime_host.lost',
            targetType: 'runtime_host',
            targetId: host.id,
            data: {
              last_heartbeat_at: host.last_heartbeat_at.toISOString(),
              after_seconds: HOST_LOST_SECONDS,
            },
          },
          tx,
        );
      }
      for (const agent of agents) {
        await deps.audit.record(
          {
            workspaceId: agent.workspace_id,
            action: 'agent.lost',
            targetType: 'agent',
            targetId: agent.id,
            data: {
              previous_status: agent.previous_status,
              runtime_instance_id: agent.runtime_instance_id,
              cause: agent.host_silent ? 'host_silent' : 'heartbeat_silent',
              last_heartbeat_at: agent.last_heartbeat_at?.toISOString() ?? null,
            },
          },
          tx,
        );
      }
      for (const agent of agents) workspaces.add(agent.workspace_id);
      return { ran: true, hosts: hosts.map((h) => h.id), agents: agents.map((a) => a.id) };
    },
    { timeout: 15_000 },
  );
  for (const workspaceId of workspaces) await announceRosterChanged(deps, workspaceId);
  return sweep;
}
