import type { WorkflowApi } from '@svc/contracts';
import type { WorkflowDeps } from '../../deps';
import { assertIntentNotBlank } from '../../domain/invocation-request';
import { suggestContract } from '../assist/suggest-contract';
import type { AssistCaller } from '../assist/suggest-contract';

type Schemas = WorkflowApi.components['schemas'];
export type ResolveInput = Schemas['ContractsResolveRequest'];
export type ResolveResult = Schemas['ContractsResolveResult'];
export type ResolvedTemplate = NonNullable<ResolveResult['template']>;

export interface AssistedResolve {
  result: ResolveResult;
  /** The model's suggestion when the project allows assisted routing (decision 48), else null. */
  followContractId: string | null;
}

/**
 * Resolves an intent against the project's active contracts (ARCHITECTURE §4). `matched: false` (with the full
 * explanation) when no contract matches. With a `caller`, a project that turned model assistance on gets the
 * model's suggestion in `explanation.assistance` when nothing matched (decision 48); the only writes are then
 * that call's budget counter and audit event. Without assistance it writes no row of any table.
 */
export async function resolveIntentAssisted(
  deps: WorkflowDeps,
  projectId: string,
  input: ResolveInput,
  caller?: AssistCaller,
): Promise<AssistedResolve> {
  assertIntentNotBlank(input.intent);
  const compiled = await deps.contractIndex.compiled(projectId);
  const { winner, explanation } = compiled.match(input);
  const assisted = caller ? await suggestContract(deps, caller, input, explanation, winner !== null) : null;
  const fullExplanation = assisted ? { ...explanation, assistance: assisted.explanation } : explanation;
  const followContractId = assisted?.followContractId ?? null;
  if (!winner) {
    return {
      result: { matched: false, contract: null, template: null, explanation: fullExplanation },
      followContractId,
    };
  }
  return {
    result: {
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
      explanation: fullExplanation,
    },
    followContractId,
  };
}

/** {@link resolveIntentAssisted} without the routing decision. */
export async function resolveIntent(
  deps: WorkflowDeps,
  projectId: string,
  input: ResolveInput,
  caller?: AssistCaller,
): Promise<ResolveResult> {
  return (await resolveIntentAssisted(deps, projectId, input, caller)).result;
}
