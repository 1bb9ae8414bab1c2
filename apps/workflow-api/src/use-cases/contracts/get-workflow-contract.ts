import { loadContractRecord } from '../../data/workflow-template.store';
import type { WorkflowDeps } from '../../deps';
import type { ContractRecord } from '../../domain/contract-rules';
import { contractNotFound } from '../../domain/errors';

/** One contract of the project, active or retired. */
export async function getWorkflowContract(
  deps: WorkflowDeps,
  projectId: string,
  contractId: string,
): Promise<ContractRecord> {
  const row = await deps.db.workflowContract.findFirst({ where: { id: contractId, projectId } });
  if (!row) throw contractNotFound(contractId);
  return loadContractRecord(deps.db, row);
}
