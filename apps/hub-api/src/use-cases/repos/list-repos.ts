import type { RepoWithCredential } from '../../data/repos.lookups';
import type { HubDeps } from '../../deps';

/** The repos of a workspace by name, each with its credential row (presented without the ciphertext). */
export function listRepos(deps: HubDeps, workspaceId: string): Promise<RepoWithCredential[]> {
  return deps.db.repo.findMany({
    where: { workspaceId },
    include: { credential: true },
    orderBy: { name: 'asc' },
  });
}
