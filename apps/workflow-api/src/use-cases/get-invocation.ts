import { AppError } from '@svc/service-kit';
import type { WorkflowDeps } from '../deps';
import type { Invocation } from '../generated/prisma/client';

/** One invocation of the project; another project's (or an unknown) id is 404 `invocation_not_found`. */
export async function getInvocation(
  deps: WorkflowDeps,
  projectId: string,
  invocationId: string,
): Promise<Invocation> {
  const invocation = await deps.db.invocation.findFirst({ where: { id: invocationId, projectId } });
  if (!invocation) {
    throw new AppError({
      status: 404,
      code: 'invocation_not_found',
      detail: `No invocation '${invocationId}' in this project.`,
    });
  }
  return invocation;
}
