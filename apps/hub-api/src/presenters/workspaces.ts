import type { HubApi } from '@svc/contracts';
import type { Membership, Participant, Workspace, WorkspaceRole } from '../generated/prisma/client';
import type { Me } from '../use-cases/auth/get-me';

type Schemas = HubApi.components['schemas'];

const iso = (d: Date) => d.toISOString();

export function presentWorkspace(w: Workspace, role?: WorkspaceRole): Schemas['Workspace'] {
  return { id: w.id, slug: w.slug, name: w.name, created_at: iso(w.createdAt), ...(role ? { role } : {}) };
}

export function presentParticipant(p: Participant): Schemas['Participant'] {
  return { id: p.id, email: p.email, display_name: p.displayName, created_at: iso(p.createdAt) };
}

export function presentMember(m: Membership & { participant: Participant }): Schemas['Member'] {
  return { participant: presentParticipant(m.participant), role: m.role, created_at: iso(m.createdAt) };
}

/** The signed-in participant with every workspace membership and its role there. */
export function presentMe(me: Me): Schemas['Me'] {
  return {
    participant: presentParticipant(me),
    memberships: me.memberships.map((m) => ({ workspace: presentWorkspace(m.workspace), role: m.role })),
  };
}
