import type { Actor } from '@svc/auth';
import { findRepoFor } from '../../data/repos.lookups';
import type { RepoWithCredential } from '../../data/repos.lookups';
import type { HubDeps } from '../../deps';

/**
 * A repo the actor can see, with its credential row (presented without the ciphertext). A repo of another
 * workspace, or a missing one, is not found.
 */
export function getRepo(
  deps: HubDeps,
  actor: Actor | undefined,
  repoId: string,
): Promise<RepoWithCredential> {
  return findRepoFor(deps.db, actor, repoId);
}
