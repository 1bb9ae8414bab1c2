import { AppError } from '@svc/service-kit';
import type { WorkflowDeps } from '../../deps';
import { invocationNotFound } from '../../domain/errors';
import type { Artifact } from '../../generated/prisma/client';

/** The envelope of an invocation of the project; 404 `artifact_not_found` until one is published. */
export async function getArtifact(
  deps: WorkflowDeps,
  projectId: string,
  invocationId: string,
): Promise<Artifact> {
  const artifact = await deps.db.artifact.findUnique({ where: { invocationId } });
  if (!artifact || artifact.projectId !== projectId) {
    const invocation = await deps.db.invocation.findFirst({
      where: { id: invocationId, projectId },
      select: { id: true },
    });
    if (!invocation) throw invocationNotFound(invocationId);
    throw new AppError({
      status: 404,
      code: 'artifact_not_found',
      detail: 'No artifact is published for this invocation yet; poll the invocation until it is completed.',
    });
  }
  return artifact;
}
