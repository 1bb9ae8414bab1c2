import { AppError } from '@svc/service-kit';
import type { HubDeps } from '../../deps';
import type { Handoff, HandoffStatus, Prisma } from '../../generated/prisma/client';

export interface HandoffFilters {
  status?: HandoffStatus;
  assigneeAgentId?: string;
  projectId?: string;
  referenceKind?: string;
  referenceId?: string;
  limit: number;
  /** Id of the last handoff of the previous page. */
  after?: string;
}

/** Handoffs of a workspace, oldest first (ids sort by creation time), filtered and paged. */
export async function listHandoffs(
  deps: HubDeps,
  workspaceId: string,
  filters: HandoffFilters,
): Promise<Handoff[]> {
  if (filters.referenceId !== undefined && filters.referenceKind === undefined) {
    throw new AppError({
      status: 400,
      code: 'reference_kind_required',
      detail: 'Filtering by reference_id needs reference_kind too.',
    });
  }
  const where: Prisma.HandoffWhereInput = {
    workspaceId,
    ...(filters.status ? { status: filters.status } : {}),
    ...(filters.assigneeAgentId ? { assigneeAgentId: filters.assigneeAgentId } : {}),
    ...(filters.projectId ? { projectId: filters.projectId } : {}),
    ...(filters.referenceKind ? { referenceKind: filters.referenceKind } : {}),
    ...(filters.referenceId ? { referenceId: filters.referenceId } : {}),
    ...(filters.after ? { id: { gt: filters.after } } : {}),
  };
  return deps.db.handoff.findMany({ where, orderBy: { id: 'asc' }, take: filters.limit });
}
