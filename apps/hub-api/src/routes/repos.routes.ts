import { workspaceOf } from '../auth/workspace-guard';
import type { HubDeps } from '../deps';
import { presentRepo } from '../presenters/collaboration';
import { createRepo } from '../use-cases/create-repo';
import { getRepo } from '../use-cases/get-repo';
import { setRepoCredential } from '../use-cases/set-repo-credential';
import type { HubHandlers } from './types';
import { actorOf, participantOf } from './types';

export function repoHandlers(
  deps: HubDeps,
): HubHandlers<'listRepos' | 'createRepo' | 'getRepo' | 'setRepoCredential'> {
  return {
    async listRepos(ctx) {
      const repos = await deps.db.repo.findMany({
        where: { workspaceId: workspaceOf(ctx).id },
        include: { credential: true },
        orderBy: { name: 'asc' },
      });
      return { status: 200, body: { data: repos.map(presentRepo) } };
    },
    async createRepo(ctx) {
      const repo = await createRepo(deps, actorOf(ctx.actor), workspaceOf(ctx).id, {
        name: ctx.body.name,
        url: ctx.body.url,
        requestId: ctx.requestId,
      });
      return { status: 201, body: { data: presentRepo(repo) } };
    },
    async getRepo(ctx) {
      const repo = await getRepo(deps, ctx.actor, ctx.params.repoId);
      return { status: 200, body: { data: presentRepo(repo) } };
    },
    async setRepoCredential(ctx) {
      const repo = await setRepoCredential(deps, participantOf(ctx.actor), ctx.params.repoId, {
        kind: ctx.body.kind,
        secret: ctx.body.secret,
        requestId: ctx.requestId,
      });
      return { status: 200, body: { data: presentRepo(repo) } };
    },
  };
}
