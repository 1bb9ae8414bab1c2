import path from 'node:path';
import { AppError } from '@svc/service-kit';
import type { Prisma } from '../generated/prisma/client';

type Tx = Prisma.TransactionClient;

/** Namespace of the advisory locks that serialize placement (serve port, console route) per runtime host. */
const PLACEMENT_LOCK_NAMESPACE = 0x5e0a6e7;

const WINDOWS_ROOT = /^(?:[A-Za-z]:[\\/]|\\\\)/;

const outsideRoot = (detail: string, workdirRoot: string) =>
  new AppError({
    status: 400,
    code: 'workdir_outside_root',
    detail,
    extra: { field: 'workdir', workdir_root: workdirRoot },
  });

/**
 * Checks that a workdir is an absolute path strictly inside the host's `workdir_root` (after resolving `.`
 * and `..`) and returns it normalized. The root decides the path flavour: a Windows root (`C:\…`) compares
 * Windows paths case-insensitively, any other root POSIX paths.
 */
export function workdirUnderRoot(workdir: string, workdirRoot: string): string {
  const flavour = WINDOWS_ROOT.test(workdirRoot) ? path.win32 : path.posix;
  if (workdir.includes('\0') || !flavour.isAbsolute(workdir)) {
    throw outsideRoot(
      `workdir '${workdir}' is not an absolute path; use a directory inside the host's workdir_root '${workdirRoot}'.`,
      workdirRoot,
    );
  }
  const trim = (p: string) => {
    const normalized = flavour.normalize(p);
    const stripped = normalized.replace(/[\\/]+$/, '');
    return stripped === '' || /^[A-Za-z]:$/.test(stripped) ? normalized : stripped;
  };
  const root = trim(workdirRoot);
  const dir = trim(workdir);
  const fold = (p: string) => (flavour === path.win32 ? p.toLowerCase() : p);
  const relative = flavour.relative(fold(root), fold(dir));
  if (relative === '' || relative.startsWith('..') || flavour.isAbsolute(relative)) {
    throw outsideRoot(
      `workdir '${workdir}' is not inside the host's workdir_root '${workdirRoot}'; use a directory under it.`,
      workdirRoot,
    );
  }
  return dir;
}

/** Whether a stored workdir is still inside a host's workdir root (the root may have changed since). */
export function isWorkdirUnderRoot(workdir: string, workdirRoot: string): boolean {
  try {
    workdirUnderRoot(workdir, workdirRoot);
    return true;
  } catch (error) {
    if (error instanceof AppError) return false;
    throw error;
  }
}

/** Capabilities as stored: without duplicates, sorted. */
export function normalizeCapabilities(capabilities: readonly string[] | undefined): string[] {
  return [...new Set(capabilities ?? [])].sort();
}

/** The console route an agent gets unless it names one: `/<workspace-slug>/agents/<agent-id>`. */
export function defaultConsoleRoute(workspaceSlug: string, agentId: string): string {
  return `/${workspaceSlug}/agents/${agentId}`;
}

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

/** Locks one agent row until the transaction ends and returns it (null when it does not exist). */
export async function lockAgent(tx: Tx, agentId: string) {
  await tx.$queryRaw`SELECT id FROM agents WHERE id = ${agentId} FOR UPDATE`;
  return tx.agent.findUnique({ where: { id: agentId } });
}
