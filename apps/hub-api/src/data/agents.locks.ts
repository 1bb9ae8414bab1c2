import { AppError } from '@svc/service-kit';
import type { AgentStatus, Prisma } from '../generated/prisma/client';

type Tx = Prisma.TransactionClient;

/** Namespace of the advisory locks that serialize placement (serve port, console route) per runtime host. */
const PLACEMENT_LOCK_NAMESPACE = 0x5e0a6e7;

/**
 * Serializes placement decisions on one runtime host until the transaction ends, so two agents cannot
 * claim the same serve port or console route concurrently.
 */
export async function lockHostPlacement(tx: Tx, hostId: string): Promise<void> {
  await tx.$executeRaw`SELECT pg_advisory_xact_lock(${PLACEMENT_LOCK_NAMESPACE}::int4, hashtext(${hostId}))`;
}

/**
 * Refuses a serve port or console route that another agent of the host (not evicted) already holds. Call
 * inside the transaction that holds `lockHostPlacement` for the host.
 */
export async function assertPlacementFree(
  tx: Tx,
  input: { hostId: string; agentId?: string; servePort?: number | null; consoleRoute?: string | null },
): Promise<void> {
  const others = { runtimeInstanceId: input.hostId, status: { not: 'evicted' as const } };
  const notSelf = input.agentId ? { id: { not: input.agentId } } : {};
  if (input.servePort !== undefined && input.servePort !== null) {
    const holder = await tx.agent.findFirst({
      where: { ...others, ...notSelf, servePort: input.servePort },
      select: { id: true, name: true },
    });
    if (holder) {
      throw new AppError({
        status: 409,
        code: 'serve_port_taken',
        detail: `Serve port ${input.servePort} is already used by agent '${holder.name}' on this runtime host; pick a free port.`,
        extra: { field: 'serve_port', agent_id: holder.id },
      });
    }
  }
  if (input.consoleRoute !== undefined && input.consoleRoute !== null) {
    const holder = await tx.agent.findFirst({
      where: { ...others, ...notSelf, consoleRoute: input.consoleRoute },
      select: { id: true, name: true },
    });
    if (holder) {
      throw new AppError({
        status: 409,
        code: 'console_route_taken',
        detail: `Console route '${input.consoleRoute}' is already used by agent '${holder.name}' on this runtime host.`,
        extra: { field: 'console_route', agent_id: holder.id },
      });
    }
  }
}

/** What a heartbeat decides on: the agent's workspace, status and last heartbeat. */
export interface AgentPresence {
  workspaceId: string;
  status: AgentStatus;
  lastHeartbeatAt: Date | null;
}

/**
 * Locks one agent row until the transaction ends and returns what a heartbeat needs of it, in the locking
 * statement itself (null when it does not exist): one statement where {@link lockAgent} takes two.
 */
export async function lockAgentPresence(tx: Tx, agentId: string): Promise<AgentPresence | null> {
  const rows = await tx.$queryRaw<
    { workspace_id: string; status: AgentStatus; last_heartbeat_at: Date | string | null }[]
  >`
    SELECT workspace_id, status::text AS status, last_heartbeat_at FROM agents WHERE id = ${agentId} FOR UPDATE`;
  const row = rows[0];
  return row
    ? {
        workspaceId: row.workspace_id,
        status: row.status,
        lastHeartbeatAt: row.last_heartbeat_at === null ? null : new Date(row.last_heartbeat_at),
      }
    : null;
}

/** Locks one agent row until the transaction ends and returns it (null when it does not exist). */
export async function lockAgent(tx: Tx, agentId: string) {
  await tx.$queryRaw`SELECT id FROM agents WHERE id = ${agentId} FOR UPDATE`;
  return tx.agent.findUnique({ where: { id: agentId } });
}
