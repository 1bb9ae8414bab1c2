import type { HubApi } from '@svc/contracts';
import type { ApiKey, Participant, Project, Workspace, WorkspaceRole } from './generated/prisma/client';

type Schemas = HubApi.components['schemas'];

const iso = (d: Date) => d.toISOString();
const isoOrNull = (d: Date | null) => (d ? d.toISOString() : null);

export function presentWorkspace(w: Workspace, role?: WorkspaceRole): Schemas['Workspace'] {
  return { id: w.id, slug: w.slug, name: w.name, created_at: iso(w.createdAt), ...(role ? { role } : {}) };
}

export function presentParticipant(p: Participant): Schemas['Participant'] {
  return { id: p.id, email: p.email, display_name: p.displayName, created_at: iso(p.createdAt) };
}

export function presentApiKey(k: ApiKey): Schemas['ApiKey'] {
  return {
    id: k.id,
    name: k.name,
    prefix: k.prefix,
    scopes: k.scopes,
    preset: (k.preset as Schemas['ScopePreset'] | null) ?? null,
    created_at: iso(k.createdAt),
    expires_at: isoOrNull(k.expiresAt),
    revoked_at: isoOrNull(k.revokedAt),
    last_used_at: isoOrNull(k.lastUsedAt),
    created_by: k.createdById,
  };
}

export function presentProject(p: Project): Schemas['Project'] {
  return { id: p.id, workspace_id: p.workspaceId, code: p.code, name: p.name, created_at: iso(p.createdAt) };
}
