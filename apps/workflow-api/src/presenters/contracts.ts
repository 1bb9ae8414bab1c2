import type { WorkflowApi } from '@svc/contracts';
import { contractTemplate, storedClassifier } from '../domain/contract-rules';
import type { ContractRecord } from '../domain/contract-rules';

export type ContractWire = WorkflowApi.components['schemas']['ContractsContract'];

/** A contract with its stored template, as the Workflow API shows it. */
export function presentContract(record: ContractRecord): ContractWire {
  const row = record.contract;
  return {
    contract_id: row.id,
    project_id: row.projectId,
    name: row.name,
    priority: row.priority,
    classifier: storedClassifier(row),
    fallback: row.isFallback,
    template: contractTemplate(record),
    is_active: row.isActive,
    revision: row.revision,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
  };
}
