import type { Actor } from '@svc/auth';
import { AppError } from '@svc/service-kit';
import type { ParticipantRole } from '@svc/service-kit';
import type { Db } from '../db';
import type { Repo, RepoCredential } from '../generated/prisma/client';
import { assertResourceAccess } from './resources.access';

export type RepoWithCredential = Repo & { credential: RepoCredential | null };

export const repoNotFound = (repoId: string) =>
  new AppError({ status: 404, code: 'repo_not_found', detail: `No repo '${repoId}'.` });

/**
 * A repo the actor can see, with its credential row (callers present it without the ciphertext). A repo
 * of another workspace, or a missing one, is not found; with `roles`, a participant needs one of them.
 */
export async function findRepoFor(
  db: Db,
  actor: Actor | undefined,
  repoId: string,
  roles?: readonly ParticipantRole[],
): Promise<RepoWithCredential> {
  const repo = await db.repo.findUnique({ where: { id: repoId }, include: { credential: true } });
  if (!repo) throw repoNotFound(repoId);
  await assertResourceAccess(db, actor, repo.workspaceId, {
    notFound: () => repoNotFound(repoId),
    roles,
  });
  return repo;
}
