import { createHash } from 'node:crypto';
import type { Actor } from '@svc/auth';
import { actorIdentity } from '@svc/auth';
import { canonicalJson } from '@svc/contracts';
import { AppError, newId } from '@svc/service-kit';
import type { HubDeps } from '../../deps';
import { projectNotFound } from '../../data/projects.lookups';
import { requireProviderModel } from '../../data/provider-models.lookups';
import type { RelaySpawnRequest } from '../../data/relay-client';
import {
  activeCatalog,
  findWorkspaceProject,
  lockWorkspaceSpawns,
  OPEN_SPAWN_STATES,
  readSpawnPolicies,
  spawnHostCandidates,
  withProjectCode,
} from '../../data/spawn.lookups';
import type { AgentSpawnView } from '../../data/spawn.lookups';
import {
  chooseSpawnHost,
  judgeSpawnAgainstPolicy,
  SPAWN_LIMIT_BLOCKER_CODES,
  spawnAgentName,
  uniqueInOrder,
} from '../../domain/spawn-policy';
import type { SpawnBlocker } from '../../domain/spawn-policy';
import type { Prisma, Project } from '../../generated/prisma/client';

/** Who authorized a spawn, as recorded on it and in its audit events. */
export interface SpawnAuthorization {
  source: 'participant' | 'api_key' | 'workflow_service';
  role?: string | null;
  invocation_id?: string | null;
}

export interface AgentSpawnAsk {
  /** The project: by id or code inside a workspace (public callers), or by id alone (the Workflow API). */
  project: { workspaceId: string; ref: string } | { id: string };
  name?: string;
  model?: string;
  capabilities: string[];
  commandKey?: string;
  serve: boolean;
  /** `api`: the public endpoint (a reused key with another body is a conflict); `workflow`: the Workflow API. */
  origin: 'api' | 'workflow';
  idempotencyKey?: string;
  actor: Actor;
  authorization: SpawnAuthorization;
  reason?: Record<string, unknown> | null;
  /** How long the relay may be asked before the spawn fails. */
  deadlineMs: number;
  /**
   * The process that drives the spawn right after it is recorded: it holds the spawn's lease from the start,
   * so the sweeper of another replica does not take it up in between.
   */
  lease?: { owner: string; ms: number };
  requestId?: string;
}

export interface RequestedSpawn {
  spawn: AgentSpawnView;
  /** False when the idempotency key named an existing spawn. */
  created: boolean;
}

/**
 * The spawn-policy blocker as a problem: 409 with the blocker's code, category and recommended action; 429 with
 * `Retry-After` when the only blocker is back-pressure (every ready host at one of its limits).
 */
export function spawnBlocked(blockers: SpawnBlocker[]): AppError {
  const [first] = blockers as [SpawnBlocker, ...SpawnBlocker[]];
  const backPressure = blockers.every((b) => SPAWN_LIMIT_BLOCKER_CODES.includes(b.code));
  return new AppError({
    status: backPressure ? 429 : 409,
    ...(backPressure ? { headers: { 'Retry-After': String(first.retry_after_seconds ?? 10) } } : {}),
    code: first.code,
    detail: `${first.message} ${first.recommended_action}`,
    extra: {
      blocker: { category: 'spawn_policy', ...first },
      blockers: blockers.map((b) => ({ category: 'spawn_policy', ...b })),
    },
  });
}

async function resolveProject(deps: HubDeps, ask: AgentSpawnAsk): Promise<Project> {
  if ('id' in ask.project) {
    const project = await deps.db.project.findUnique({ where: { id: ask.project.id } });
    if (!project) throw projectNotFound(ask.project.id);
    return project;
  }
  return findWorkspaceProject(deps.db, ask.project.workspaceId, ask.project.ref);
}

/** A name no agent of the workspace and no open spawn has. */
async function freeAgentName(
  tx: Prisma.TransactionClient,
  workspaceId: string,
  projectCode: string,
  capabilities: string[],
): Promise<string> {
  for (let attempt = 0; attempt < 8; attempt += 1) {
    const name = spawnAgentName(projectCode, capabilities);
    const taken =
      (await tx.agent.count({ where: { workspaceId, name } })) +
      (await tx.agentSpawn.count({ where: { workspaceId, name, state: { in: [...OPEN_SPAWN_STATES] } } }));
    if (taken === 0) return name;
  }
  throw new AppError({
    status: 503,
    code: 'spawn_name_unavailable',
    detail: 'No free agent name; try again.',
  });
}

/**
 * Records a spawn the project's effective policy allows, on the host it goes to, before any relay is called
 * (the caller then drives it). The policy, the host choice, the name and the idempotency key are decided
 * under one lock per workspace, so concurrent spawns never overshoot a host's limit or share a name. A
 * refusal is a 409 naming the spawn-policy blocker. Audited as `agent.spawn.requested` with the
 * authorization source. An idempotency key seen before answers its spawn (for `api`, only with the same
 * body: another body is 409 `idempotency_conflict`).
 */
export async function requestAgentSpawn(deps: HubDeps, ask: AgentSpawnAsk): Promise<RequestedSpawn> {
  const project = await resolveProject(deps, ask);
  const workspaceId = project.workspaceId;
  const capabilities = uniqueInOrder(ask.capabilities);
  const fingerprint = createHash('sha256')
    .update(
      canonicalJson({
        project_id: project.id,
        name: ask.name ?? null,
        model: ask.model ?? null,
        capabilities,
        command_key: ask.commandKey ?? null,
        serve: ask.serve,
      }),
    )
    .digest('hex');
  const requestedBy = actorIdentity(ask.actor);

  const outcome = await deps.db.$transaction(
    async (tx) => {
      await lockWorkspaceSpawns(tx, workspaceId);
      if (ask.idempotencyKey !== undefined) {
        const existing = await tx.agentSpawn.findUnique({
          where: {
            workspaceId_origin_idempotencyKey: {
              workspaceId,
              origin: ask.origin,
              idempotencyKey: ask.idempotencyKey,
            },
          },
          include: withProjectCode,
        });
        if (existing) {
          if (ask.origin === 'api' && existing.requestFingerprint !== fingerprint) {
            throw new AppError({
              status: 409,
              code: 'idempotency_conflict',
              detail: `spawn_id '${ask.idempotencyKey}' was used for another spawn request; repeat the original body or use a new spawn_id.`,
              extra: { spawn_id: existing.id },
            });
          }
          return { spawn: existing, created: false };
        }
      }
      if (ask.model !== undefined) await requireProviderModel(deps.db, ask.model);
      const policies = await readSpawnPolicies(tx, workspaceId, project.id);
      const verdict = judgeSpawnAgainstPolicy(
        policies.rules,
        { model: ask.model, capabilities, commandKey: ask.commandKey },
        await activeCatalog(tx),
      );
      const now = deps.now();
      const choice = chooseSpawnHost(
        await spawnHostCandidates(tx, workspaceId, now),
        policies.rules.maxRunningAgentsPerHost,
      );
      const blockers = [...verdict.blockers, ...(choice.blocker ? [choice.blocker] : [])];
      if (blockers.length > 0 || !verdict.model || !choice.hostId) throw spawnBlocked(blockers);

      if (ask.name !== undefined) {
        const inFlight = await tx.agentSpawn.findFirst({
          where: { workspaceId, name: ask.name, state: { in: [...OPEN_SPAWN_STATES] } },
          select: { id: true },
        });
        if (inFlight) {
          throw new AppError({
            status: 409,
            code: 'spawn_in_progress',
            detail: `A spawn of agent '${ask.name}' is already in progress (${inFlight.id}); wait for it to end.`,
            extra: { spawn_id: inFlight.id },
          });
        }
      }
      const name = ask.name ?? (await freeAgentName(tx, workspaceId, project.code, capabilities));
      const id = newId('spw');
      const relayRequest: RelaySpawnRequest = {
        spawn_id: id,
        command_key: verdict.commandKey,
        agent: {
          name,
          model: verdict.model,
          capabilities,
          project: project.code,
          serve: ask.serve,
          worker: false,
        },
      };
      const authorization = {
        source: ask.authorization.source,
        role: ask.authorization.role ?? null,
        invocation_id: ask.authorization.invocation_id ?? null,
      };
      const spawn = await tx.agentSpawn.create({
        data: {
          id,
          workspaceId,
          projectId: project.id,
          runtimeInstanceId: choice.hostId,
          state: 'requested',
          origin: ask.origin,
          idempotencyKey: ask.idempotencyKey ?? null,
          requestFingerprint: fingerprint,
          name,
          model: verdict.model,
          capabilities,
          commandKey: verdict.commandKey,
          serve: ask.serve,
          relayRequest: relayRequest as unknown as Prisma.InputJsonValue,
          requestedBy,
          authorization,
          reason: (ask.reason ?? undefined) as Prisma.InputJsonValue | undefined,
          deadlineAt: new Date(now.getTime() + ask.deadlineMs),
          ...(ask.lease
            ? { leaseOwner: ask.lease.owner, leaseUntil: new Date(now.getTime() + ask.lease.ms) }
            : {}),
          createdAt: now,
        },
        include: withProjectCode,
      });
      await deps.audit.record(
        {
          workspaceId,
          actor: ask.actor,
          action: 'agent.spawn.requested',
          targetType: 'agent_spawn',
          targetId: id,
          data: {
            spawn_id: id,
            project_id: project.id,
            runtime_instance_id: choice.hostId,
            agent_name: name,
            model: verdict.model,
            capabilities,
            command_key: verdict.commandKey,
            authorization_source: authorization.source,
            invocation_id: authorization.invocation_id,
            reason: ask.reason ?? null,
          },
          requestId: ask.requestId,
        },
        tx,
      );
      return { spawn, created: true };
    },
    { timeout: 15_000 },
  );
  return outcome;
}
