import type { WorkflowApi } from '@svc/contracts';
import type { WorkflowDeps } from '../../deps';

type Schemas = WorkflowApi.components['schemas'];
export type ResolveInput = Schemas['ContractsResolveRequest'];
export type ResolveResult = Schemas['ContractsResolveResult'];
export type ResolvedTemplate = NonNullable<ResolveResult['template']>;

/**
 * Resolves an intent against the project's active contracts (ARCHITECTURE §4). Read-only: it writes no row of any
 * table. `matched: false` (with the full explanation) when no contract matches.
 */
export async function resolveIntent(
  deps: WorkflowDeps,
  projectId: string,
  input: ResolveInput,
): Promise<ResolveResult> {
  const compiled = await deps.contractIndex.compiled(projectId);
  const { winner, explanation } = compiled.match(input);
  if (!winner) return { matched: false, contract: null, template: null, explanation };
  return {
    matched: true,
    contract: {
      contract_id: winner.id,
      name: winner.name,
      priority: winner.priority,
      is_fallback: winner.isFallback,
    },
    template: winner.template
      ? {
          key: winner.template.key,
          version: winner.template.version,
          definition: structuredClone(winner.template.definition),
        }
      : null,
    explanation,
  };
}
