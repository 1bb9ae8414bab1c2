import { AppError } from '@svc/service-kit';
import type { Db } from '../db';
import { hostReadiness, runningAgentFilter } from '../domain/host-readiness';
import { rulesOf } from '../domain/spawn-policy';
import type { SpawnHostCandidate, SpawnPolicyRules } from '../domain/spawn-policy';
import type { AgentSpawn, Prisma, Project, SpawnPolicy } from '../generated/prisma/client';
import { projectNotFound } from './projects.lookups';

type Tx = Prisma.TransactionClient;

/** Spawn states that are still driven. */
export const OPEN_SPAWN_STATES = ['requested', 'in_progress'] as const;

/** Namespace of the advisory locks that serialize spawn decisions (host choice, names, keys) per workspace. */
const SPAWN_LOCK_NAMESPACE = 0x5a3b1;

export async function lockWorkspaceSpawns(tx: Tx, workspaceId: string): Promise<void> {
  await tx.$executeRaw`SELECT pg_advisory_xact_lock(${SPAWN_LOCK_NAMESPACE}::int4, hashtext(${workspaceId}))`;
}

export const agentSpawnNotFound = (spawnId: string) =>
  new AppError({ status: 404, code: 'agent_spawn_not_found', detail: `No agent spawn '${spawnId}'.` });

/** A project of the workspace by id (`prj_…`) or code; another workspace's project is not found. */
export async function findWorkspaceProject(db: Db | Tx, workspaceId: string, ref: string): Promise<Project> {
  const project =
    (await db.project.findFirst({ where: { id: ref, workspaceId } })) ??
    (await db.project.findUnique({ where: { workspaceId_code: { workspaceId, code: ref } } }));
  if (!project) throw projectNotFound(ref);
  return project;
}

export interface SpawnPolicies {
  workspacePolicy: SpawnPolicy | null;
  projectPolicy: SpawnPolicy | null;
  /** The project's override when it has one, else the workspace's (null: the default, off). */
  effective: SpawnPolicy | null;
  rules: SpawnPolicyRules;
}

/** The stored policies of a workspace and, when given, one of its projects. */
export async function readSpawnPolicies(
  db: Db | Tx,
  workspaceId: string,
  projectId: string | null,
): Promise<SpawnPolicies> {
  const rows = await db.spawnPolicy.findMany({
    where: { workspaceId, OR: [{ projectId: null }, ...(projectId ? [{ projectId }] : [])] },
  });
  const workspacePolicy = rows.find((r) => r.projectId === null) ?? null;
  const projectPolicy = projectId ? (rows.find((r) => r.projectId === projectId) ?? null) : null;
  const effective = projectPolicy ?? workspacePolicy;
  return { workspacePolicy, projectPolicy, effective, rules: rulesOf(effective) };
}

/** Identifiers of the active provider/model catalog. */
export async function activeCatalog(db: Db | Tx): Promise<Set<string>> {
  const rows = await db.providerModel.findMany({ where: { active: true }, select: { id: true } });
  return new Set(rows.map((r) => r.id));
}

/**
 * The workspace's hosts as host selection sees them: spawn readiness and load (agents running there now
 * plus spawns still in progress there, so concurrent spawns do not overshoot a host's limit).
 */
export async function spawnHostCandidates(
  db: Db | Tx,
  workspaceId: string,
  now: Date,
): Promise<SpawnHostCandidate[]> {
  const hosts = await db.runtimeHost.findMany({ where: { workspaceId } });
  if (hosts.length === 0) return [];
  const ids = hosts.map((h) => h.id);
  const running = await db.agent.groupBy({
    by: ['runtimeInstanceId'],
    where: { workspaceId, runtimeInstanceId: { in: ids }, ...runningAgentFilter(now) },
    _count: { _all: true },
  });
  const open = await db.agentSpawn.groupBy({
    by: ['runtimeInstanceId'],
    where: { workspaceId, runtimeInstanceId: { in: ids }, state: { in: [...OPEN_SPAWN_STATES] } },
    _count: { _all: true },
  });
  const load = new Map<string, number>();
  const spawning = new Map<string, number>();
  for (const r of running) if (r.runtimeInstanceId) load.set(r.runtimeInstanceId, r._count._all);
  for (const s of open) {
    load.set(s.runtimeInstanceId, (load.get(s.runtimeInstanceId) ?? 0) + s._count._all);
    spawning.set(s.runtimeInstanceId, s._count._all);
  }
  return hosts.map((host) => ({
    id: host.id,
    name: host.name,
    spawnReady: hostReadiness(host, now).spawn_ready,
    load: load.get(host.id) ?? 0,
    spawning: spawning.get(host.id) ?? 0,
    maxAgents: host.maxAgents,
    maxConcurrentSpawns: host.maxConcurrentSpawns,
  }));
}

/** A spawn with the code of its project, as presenters show it. */
export type AgentSpawnView = AgentSpawn & { project: Pick<Project, 'code'> };

export const withProjectCode = { project: { select: { code: true } } } as const;
