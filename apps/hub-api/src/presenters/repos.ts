import type { HubApi } from '@svc/contracts';
import type { Repo, RepoCredential } from '../generated/prisma/client';

type Schemas = HubApi.components['schemas'];

const iso = (d: Date) => d.toISOString();
const isoOrNull = (d: Date | null) => (d ? d.toISOString() : null);

/** A repo with what is known about its credential; the sealed secret is never part of it. */
export function presentRepo(r: Repo & { credential: RepoCredential | null }): Schemas['Repo'] {
  const c = r.credential;
  return {
    id: r.id,
    workspace_id: r.workspaceId,
    name: r.name,
    url: r.url,
    credential: c
      ? {
          kind: c.kind as Schemas['RepoCredentialKind'],
          fingerprint: c.fingerprint,
          set_at: iso(c.setAt),
          rotated_at: isoOrNull(c.rotatedAt),
        }
      : null,
    created_at: iso(r.createdAt),
  };
}
