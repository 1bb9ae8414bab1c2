import type { Actor } from '@svc/auth';
import { AppError, newId } from '@svc/service-kit';
import { isUniqueViolation } from '../../db';
import type { HubDeps } from '../../deps';
import type { Repo, RepoCredential } from '../../generated/prisma/client';
import { repoUrlProblem } from '../../domain/repo-url';

/** Registers a repo (without a credential); its name is unique within the workspace. */
export async function createRepo(
  deps: HubDeps,
  actor: Actor,
  workspaceId: string,
  input: { name: string; url: string; requestId?: string },
): Promise<Repo & { credential: RepoCredential | null }> {
  const problem = repoUrlProblem(input.url);
  if (problem) {
    throw new AppError({
      status: 400,
      code: 'repo_url_invalid',
      detail: `The repo url ${problem}.`,
      extra: { errors: [{ location: 'body/url', message: problem }] },
    });
  }
  try {
    return await deps.db.$transaction(async (tx) => {
      const repo = await tx.repo.create({
        data: { id: newId('rep'), workspaceId, name: input.name, url: input.url, createdAt: deps.now() },
      });
      await deps.audit.record(
        {
          workspaceId,
          actor,
          action: 'repo.created',
          targetType: 'repo',
          targetId: repo.id,
          data: { name: repo.name, url: repo.url },
          requestId: input.requestId,
        },
        tx,
      );
      return { ...repo, credential: null };
    });
  } catch (error) {
    if (isUniqueViolation(error)) {
      throw new AppError({
        status: 409,
        code: 'repo_name_taken',
        detail: `A repo named '${input.name}' already exists in this workspace.`,
      });
    }
    throw error;
  }
}
