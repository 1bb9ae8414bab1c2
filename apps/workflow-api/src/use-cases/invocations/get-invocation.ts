import { loadRunDetails } from '../../data/run-details.lookups';
import type { InvocationView } from '../../data/run-details.lookups';
import type { WorkflowDeps } from '../../deps';
import { invocationNotFound } from '../../domain/errors';

/**
 * One invocation of the project with its run's progress; another project's (or an unknown) id is 404
 * `invocation_not_found`.
 */
export async function getInvocation(
  deps: WorkflowDeps,
  projectId: string,
  invocationId: string,
): Promise<InvocationView> {
  const invocation = await deps.db.invocation.findFirst({ where: { id: invocationId, projectId } });
  if (!invocation) throw invocationNotFound(invocationId);
  return { invocation, details: await loadRunDetails(deps.db, invocation.id) };
}
