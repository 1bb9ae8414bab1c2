import type { WorkflowDeps } from '../deps';
import { presentContract, templatesFor } from './workflow-contract-record';
import type { ContractWire } from './workflow-contract-record';

export interface ListContractsInput {
  includeInactive?: boolean;
  limit?: number;
  cursor?: string;
}

/** A page of the project's contracts in creation order (`contract_id` ascending). */
export async function listWorkflowContracts(
  deps: WorkflowDeps,
  projectId: string,
  input: ListContractsInput,
): Promise<{ data: ContractWire[]; next_cursor: string | null }> {
  const limit = input.limit ?? 100;
  const rows = await deps.db.workflowContract.findMany({
    where: {
      projectId,
      ...(input.includeInactive ? {} : { isActive: true }),
      ...(input.cursor ? { id: { gt: input.cursor } } : {}),
    },
    orderBy: { id: 'asc' },
    take: limit + 1,
  });
  const page = rows.slice(0, limit);
  const templates = await templatesFor(deps.db, projectId, page);
  return {
    data: page.map((row) =>
      presentContract(row, templates.get(`${row.templateKey}\u0000${row.templateVersion}`)),
    ),
    next_cursor: rows.length > limit ? (page[page.length - 1]?.id ?? null) : null,
  };
}
