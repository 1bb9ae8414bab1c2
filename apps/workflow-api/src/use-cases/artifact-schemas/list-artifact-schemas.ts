import type { WorkflowDeps } from '../../deps';
import type { ArtifactSchema } from '../../generated/prisma/client';

export interface ListArtifactSchemasFilter {
  projectId?: string;
  name?: string;
  version?: string;
  limit: number;
  /** The last id of the previous page. */
  cursor?: string;
}

/** Schema versions of the workspace, oldest first (ids sort by creation), one page at a time. */
export async function listArtifactSchemas(
  deps: WorkflowDeps,
  workspaceId: string,
  filter: ListArtifactSchemasFilter,
): Promise<{ items: ArtifactSchema[]; nextCursor: string | null }> {
  const rows = await deps.db.artifactSchema.findMany({
    where: {
      workspaceId,
      ...(filter.projectId !== undefined ? { projectId: filter.projectId } : {}),
      ...(filter.name !== undefined ? { name: filter.name } : {}),
      ...(filter.version !== undefined ? { version: filter.version } : {}),
      ...(filter.cursor !== undefined ? { id: { gt: filter.cursor } } : {}),
    },
    orderBy: { id: 'asc' },
    take: filter.limit + 1,
  });
  const items = rows.slice(0, filter.limit);
  const last = items[items.length - 1];
  return { items, nextCursor: rows.length > filter.limit && last ? last.id : null };
}
