import { workspaceOf } from '../auth/workspace-guard';
import type { HubDeps } from '../deps';
import { presentRepo } from '../presenters/repos';
import { createRepo } from '../use-cases/repos/create-repo';
import { getRepo } from '../use-cases/repos/get-repo';
import { listRepos } from '../use-cases/repos/list-repos';
import { setRepoCredential } from '../use-cases/repos/set-repo-credential';
import type { HubHandlers } from './types';
import { actorOf, participantOf } from './types';

export function repoHandlers(
  deps: HubDeps,
): HubHandlers<'listRepos' | 'createRepo' | 'getRepo' | 'setRepoCredential'> {
  return {
    async listRepos(ctx) {
      const repos = await listRepos(deps, workspaceOf(ctx).id);
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
