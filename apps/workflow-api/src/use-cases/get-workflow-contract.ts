import type { WorkflowDeps } from '../deps';
import { contractNotFound, presentOne } from './workflow-contract-record';
import type { ContractWire } from './workflow-contract-record';

/** One contract of the project, active or retired. */
export async function getWorkflowContract(
  deps: WorkflowDeps,
  projectId: string,
  contractId: string,
): Promise<ContractWire> {
  const row = await deps.db.workflowContract.findFirst({ where: { id: contractId, projectId } });
  if (!row) throw contractNotFound(contractId);
  return presentOne(deps.db, row);
}
