import type { HubApi } from '@svc/contracts';
import type { Project } from '../generated/prisma/client';

type Schemas = HubApi.components['schemas'];

const iso = (d: Date) => d.toISOString();

export function presentProject(p: Project): Schemas['Project'] {
  return {
    id: p.id,
    workspace_id: p.workspaceId,
    code: p.code,
    name: p.name,
    created_at: iso(p.createdAt),
    archived_at: p.archivedAt ? iso(p.archivedAt) : null,
  };
}
