import { templatesFor } from '../../data/workflow-template.store';
import type { WorkflowDeps } from '../../deps';
import { templateVersionKey } from '../../domain/contract-rules';
import type { ContractRecord } from '../../domain/contract-rules';

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
): Promise<{ items: ContractRecord[]; nextCursor: string | null }> {
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
    items: page.map((contract) => ({
      contract,
      definition: templates.get(templateVersionKey(contract.templateKey, contract.templateVersion)),
    })),
    nextCursor: rows.length > limit ? (page[page.length - 1]?.id ?? null) : null,
  };
}
