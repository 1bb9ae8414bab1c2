import type { Actor } from '@svc/auth';
import { AppError, newId } from '@svc/service-kit';
import { actorIdentity } from '@svc/auth';
import type { HubDeps } from '../../deps';
import type { Handoff, Prisma } from '../../generated/prisma/client';
import { agentEvicted } from '../../data/agents.lookups';

export interface HandoffReferenceInput {
  kind: string;
  id: string;
  data?: Record<string, unknown>;
}

export interface CreateHandoffInput {
  workspaceId: string;
  title: string;
  description?: string;
  projectId?: string;
  assigneeAgentId?: string;
  reference?: HandoffReferenceInput;
  /**
   * Return the handoff an earlier call created for the same reference and assignee instead of creating
   * another (the workflow engine's stage handoffs). Needs `reference` and `assigneeAgentId`.
   */
  idempotent?: boolean;
  requestId?: string;
}

export interface CreatedHandoff {
  handoff: Handoff;
  /** False when an idempotent call found the handoff of an earlier call. */
  created: boolean;
}

type Tx = Prisma.TransactionClient;

export const projectNotInWorkspace = (projectId: string) =>
  new AppError({
    status: 400,
    code: 'project_not_found',
    detail: `No project '${projectId}' in this workspace.`,
  });

export const assigneeNotFound = (agentId: string) =>
  new AppError({
    status: 400,
    code: 'assignee_not_found',
    detail: `No agent '${agentId}' in this workspace.`,
  });

export const assigneeHostDraining = (agentId: string, hostId: string) =>
  new AppError({
    status: 409,
    code: 'runtime_host_draining',
    detail: `Agent '${agentId}' runs on runtime host '${hostId}', which is draining: it takes no new work.`,
    extra: { runtime_instance_id: hostId },
  });

/** The key of the advisory lock that serializes idempotent creations of one (reference, assignee) pair. */
export function handoffLockKey(
  workspaceId: string,
  reference: HandoffReferenceInput,
  assigneeAgentId: string,
) {
  return JSON.stringify(['handoff', workspaceId, reference.kind, reference.id, assigneeAgentId]);
}

async function assertProjectInWorkspace(tx: Tx, workspaceId: string, projectId: string): Promise<void> {
  const project = await tx.project.findFirst({ where: { id: projectId, workspaceId }, select: { id: true } });
  if (!project) throw projectNotInWorkspace(projectId);
}

async function assertAssignable(tx: Tx, workspaceId: string, agentId: string): Promise<void> {
  const agent = await tx.agent.findUnique({
    where: { id: agentId },
    select: { workspaceId: true, status: true, runtimeInstanceId: true },
  });
  if (!agent || agent.workspaceId !== workspaceId) throw assigneeNotFound(agentId);
  if (agent.status === 'evicted') throw agentEvicted(agentId, 'be assigned a handoff');
  if (agent.runtimeInstanceId) {
    // A share lock on the host row: a drain (which updates the row) commits before this check or after this
    // handoff, so a runtime that saw the drain never misses a handoff created before it.
    const [host] = await tx.$queryRaw<Array<{ drain_requested_at: Date | null }>>`
      SELECT drain_requested_at FROM runtime_hosts WHERE id = ${agent.runtimeInstanceId} FOR SHARE`;
    if (host?.drain_requested_at) throw assigneeHostDraining(agentId, agent.runtimeInstanceId);
  }
}

/**
 * Creates a handoff (status `open`) in a workspace, optionally for a project, an assignee and a reference.
 * In idempotent mode the (reference kind, reference id, assignee) triple is serialized with a transaction
 * advisory lock, so concurrent identical calls still create exactly one handoff.
 */
export async function createHandoff(
  deps: HubDeps,
  actor: Actor,
  input: CreateHandoffInput,
): Promise<CreatedHandoff> {
  const { workspaceId, reference } = input;
  if (input.idempotent && (!reference || !input.assigneeAgentId)) {
    throw new Error('createHandoff: idempotent creation needs a reference and an assignee');
  }
  return deps.db.$transaction(async (tx) => {
    if (input.idempotent && reference && input.assigneeAgentId) {
      const lockKey = handoffLockKey(workspaceId, reference, input.assigneeAgentId);
      await tx.$queryRaw`SELECT 1 AS locked FROM pg_advisory_xact_lock(hashtextextended(${lockKey}, 0))`;
      const existing = await tx.handoff.findFirst({
        where: {
          workspaceId,
          referenceKind: reference.kind,
          referenceId: reference.id,
          assigneeAgentId: input.assigneeAgentId,
        },
        orderBy: { id: 'asc' },
      });
      if (existing) return { handoff: existing, created: false };
    }
    if (input.projectId) await assertProjectInWorkspace(tx, workspaceId, input.projectId);
    if (input.assigneeAgentId) await assertAssignable(tx, workspaceId, input.assigneeAgentId);

    const creator = actorIdentity(actor);
    const handoff = await tx.handoff.create({
      data: {
        id: newId('hof'),
        workspaceId,
        projectId: input.projectId ?? null,
        title: input.title.trim(),
        description: input.description ?? '',
        assigneeAgentId: input.assigneeAgentId ?? null,
        createdByKind: creator.kind,
        createdById: creator.id,
        referenceKind: reference?.kind ?? null,
        referenceId: reference?.id ?? null,
        referenceData: (reference?.data ?? {}) as Prisma.InputJsonObject,
        createdAt: deps.now(),
        updatedAt: deps.now(),
      },
    });
    await deps.audit.record(
      {
        workspaceId,
        actor,
        action: 'handoff.created',
        targetType: 'handoff',
        targetId: handoff.id,
        data: {
          project_id: handoff.projectId,
          assignee_agent_id: handoff.assigneeAgentId,
          reference_kind: handoff.referenceKind,
          reference_id: handoff.referenceId,
        },
        requestId: input.requestId,
      },
      tx,
    );
    return { handoff, created: true };
  });
}
