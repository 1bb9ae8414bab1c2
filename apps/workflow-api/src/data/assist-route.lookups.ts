import type { Db } from '../db';
import { effectiveDefinition, parseTemplateDefinition } from '../domain/template-definition';
import type { RouteTemplate } from '../domain/template-definition';

export interface AssistedContractRoute {
  contractId: string;
  name: string;
  priority: number;
  isFallback: boolean;
  templateKey: string;
  templateVersion: string;
  /** The stored template with its stages made explicit; null when the template version is missing. */
  template: RouteTemplate | null;
}

/** The active contract a model suggested, with its template, or null when it was retired meanwhile. */
export async function assistedContractRoute(
  db: Db,
  projectId: string,
  contractId: string,
): Promise<AssistedContractRoute | null> {
  const contract = await db.workflowContract.findFirst({
    where: { id: contractId, projectId, isActive: true },
  });
  if (!contract) return null;
  const stored = await db.workflowTemplate.findFirst({
    where: { projectId, key: contract.templateKey, version: contract.templateVersion },
  });
  return {
    contractId: contract.id,
    name: contract.name,
    priority: contract.priority,
    isFallback: contract.isFallback,
    templateKey: contract.templateKey,
    templateVersion: contract.templateVersion,
    template: stored
      ? {
          key: contract.templateKey,
          version: contract.templateVersion,
          definition: effectiveDefinition(
            contract.templateKey,
            parseTemplateDefinition(stored.definition),
            contract.name,
          ),
        }
      : null,
  };
}
