import type { Actor } from '@svc/auth';
import type { WorkflowApi } from '@svc/contracts';
import type { ProjectRef } from '../../auth/project-directory';
import { reserveAssistBudget, settleAssistBudget } from '../../data/assist-budget';
import { loadAssistSettings } from '../../data/assist-settings.lookups';
import type { WorkflowDeps } from '../../deps';
import { buildAssistPrompt, callAssistProvider, reservedTokens } from '../../domain/assist-provider';
import type { AssistContractView, AssistOutcome } from '../../domain/assist-provider';
import { ASSIST_MAX_CONTRACTS } from '../../domain/assist-settings';
import type { AssistSettings } from '../../domain/assist-settings';
import type { MatchExplanation, MatchRequest } from '../../domain/contract-matcher';

export type AssistanceExplanation = WorkflowApi.components['schemas']['AssistanceExplanation'];

/** Who asks: resolve, preflight and invoke pass the caller, so each model call is audited with them. */
export interface AssistCaller {
  actor: Actor;
  project: ProjectRef;
  requestId?: string;
  /** Asked once assistance is on, before anything is spent: false skips the model (an invocation's replay). */
  worthAsking?: () => Promise<boolean>;
}

export interface ContractSuggestion {
  explanation: AssistanceExplanation;
  /** The suggested contract when the project allows assisted routing, else null. */
  followContractId: string | null;
}

const strings = (list: unknown): string[] =>
  Array.isArray(list) ? list.filter((v): v is string => typeof v === 'string') : [];

/** The contracts offered to the model: id, name and phrases only (the allow-list of decision 48). */
async function offeredContracts(
  deps: WorkflowDeps,
  projectId: string,
  onlyIds: string[] | null,
): Promise<AssistContractView[]> {
  const rows = await deps.db.workflowContract.findMany({
    where: { projectId, isActive: true, ...(onlyIds ? { id: { in: onlyIds } } : {}) },
    orderBy: [{ priority: 'desc' }, { id: 'asc' }],
    take: ASSIST_MAX_CONTRACTS,
    select: { id: true, name: true, classifier: true },
  });
  return rows.map((row) => ({
    contract_id: row.id,
    name: row.name,
    phrases: strings((row.classifier as { intentContains?: unknown } | null)?.intentContains),
  }));
}

/** Contracts tied with the winner on every rule but the oldest id (the tie the total order broke). */
function tiedWithWinner(explanation: MatchExplanation): string[] {
  const matched = explanation.candidates.filter((c) => c.matched);
  const [winner] = matched;
  if (!winner) return [];
  return matched
    .filter(
      (c) =>
        c.priority === winner.priority &&
        c.criteria_matched === winner.criteria_matched &&
        c.is_fallback === winner.is_fallback,
    )
    .map((c) => c.contract_id);
}

/**
 * Asks the project's model to rank its active contracts when resolve found no match (or, with `assist_on_tie`,
 * when the oldest id broke a tie). Null — and no query beyond one settings read — when assistance is off.
 *
 * Order: the settings, the offered contracts, the workspace credential (from the hub), the budget reservation
 * (atomic, before the call), the call, the settlement of the reserved tokens, one `assistance.called` audit event.
 * These two writes (budget counter and audit event) are the only side effects of an assisted resolve.
 */
export async function suggestContract(
  deps: WorkflowDeps,
  caller: AssistCaller,
  request: MatchRequest,
  explanation: MatchExplanation,
  matched: boolean,
): Promise<ContractSuggestion | null> {
  const tie = matched && explanation.winner_rule === 'oldest_contract';
  if (matched && !tie) return null;
  const settings = await loadAssistSettings(deps.db, caller.project.id);
  if (!settings.enabled || !settings.provider || !settings.model || !settings.baseUrl) return null;
  if (tie && !settings.assistOnTie) return null;
  if (caller.worthAsking && !(await caller.worthAsking())) return null;
  const trigger = tie ? 'tie' : 'no_match';
  const contracts = await offeredContracts(deps, caller.project.id, tie ? tiedWithWinner(explanation) : null);
  if (contracts.length === 0) return null;
  const prompt = buildAssistPrompt({
    intent: request.intent,
    requiredCapabilities: request.required_capabilities ?? [],
    contracts,
  });

  const base = {
    model_assisted: true as const,
    trigger: trigger as AssistanceExplanation['trigger'],
    provider: settings.provider,
    model: settings.model,
    contracts_offered: contracts.length,
    routing: (settings.allowAssistedRouting ? 'allowed' : 'pin_required') as AssistanceExplanation['routing'],
  };
  const finish = async (result: {
    outcome: AssistOutcome;
    detail: string;
    suggestion: AssistanceExplanation['suggestion'];
    latencyMs: number | null;
    tokensIn: number;
    tokensOut: number;
    budgetWarning: boolean;
  }): Promise<ContractSuggestion> => {
    await recordCall(deps, caller, settings, {
      trigger,
      outcome: result.outcome,
      suggestion: result.suggestion,
      latencyMs: result.latencyMs,
      tokensIn: result.tokensIn,
      tokensOut: result.tokensOut,
      promptSha256: prompt.sha256,
      prompt: settings.storePrompts ? prompt.text : null,
      contractsOffered: contracts.length,
    });
    return {
      explanation: {
        ...base,
        outcome: result.outcome,
        detail: result.detail,
        suggestion: result.suggestion,
        latency_ms: result.latencyMs,
        tokens_in: result.tokensIn,
        tokens_out: result.tokensOut,
        budget_warning: result.budgetWarning,
      },
      followContractId:
        result.outcome === 'suggested' && settings.allowAssistedRouting && result.suggestion
          ? result.suggestion.contract_id
          : null,
    };
  };
  const noCall = { suggestion: null, latencyMs: null, tokensIn: 0, tokensOut: 0 };

  const apiKey = await workspaceProviderKey(deps, caller.project.workspace.id, settings.provider);
  if (apiKey.kind !== 'found') {
    return finish({
      ...noCall,
      outcome: apiKey.kind === 'missing' ? 'credential_missing' : 'provider_down',
      detail:
        apiKey.kind === 'missing'
          ? `The workspace holds no credential for provider '${settings.provider}'; no call was made.`
          : 'The workspace credential could not be read from the hub; no call was made.',
      budgetWarning: false,
    });
  }

  const reserve = reservedTokens(prompt);
  const reservation = await reserveAssistBudget(deps.db, caller.project.id, reserve, deps.now());
  if (!reservation.reserved) {
    const which = reservation.usage.day.exhausted ? 'day' : 'month';
    return finish({
      ...noCall,
      outcome: 'budget_exhausted',
      detail: `The project's model-assistance budget for this ${which} is used up; no call was made.`,
      budgetWarning: true,
    });
  }

  const result = await callAssistProvider({
    baseUrl: settings.baseUrl,
    model: settings.model,
    apiKey: apiKey.secret,
    timeoutMs: settings.timeoutMs,
    prompt,
  });
  const reported =
    result.tokensIn !== null && result.tokensOut !== null ? result.tokensIn + result.tokensOut : null;
  // Tokens the provider reported replace the reservation; a refused call used none; a timeout keeps it all.
  const actual = reported ?? (!result.ok && result.failure === 'provider_down' ? 0 : reserve);
  await settleAssistBudget(deps.db, caller.project.id, reservation.periods, actual - reserve);
  const tokens = { tokensIn: result.tokensIn ?? 0, tokensOut: result.tokensOut ?? 0 };
  const budgetWarning = reservation.usage.warning;
  if (!result.ok) {
    return finish({
      outcome: result.failure,
      detail: result.detail,
      suggestion: null,
      latencyMs: result.latencyMs,
      ...tokens,
      budgetWarning,
    });
  }
  const chosen = contracts.find((c) => c.contract_id === result.answer.contractId);
  return finish({
    outcome: chosen ? 'suggested' : 'no_suggestion',
    detail: chosen
      ? settings.allowAssistedRouting
        ? 'Model-assisted suggestion; the project allows invocations to follow it.'
        : 'Model-assisted suggestion; an invocation follows it only when workflow_contract_id pins it.'
      : 'The model found no offered contract that fits.',
    suggestion: chosen
      ? { contract_id: chosen.contract_id, name: chosen.name, reason: result.answer.reason }
      : null,
    latencyMs: result.latencyMs,
    ...tokens,
    budgetWarning,
  });
}

type ProviderKey = { kind: 'found'; secret: string } | { kind: 'missing' } | { kind: 'unavailable' };

/** The workspace's provider secret, read from the hub for this call only (never cached, never logged). */
async function workspaceProviderKey(
  deps: WorkflowDeps,
  workspaceId: string,
  provider: string,
): Promise<ProviderKey> {
  try {
    const result = await deps.hub.GET(
      '/internal/v1/workspaces/{workspaceId}/provider-credentials/{provider}',
      {
        params: { path: { workspaceId, provider } },
        signal: AbortSignal.timeout(5_000),
      },
    );
    if (result.data) return { kind: 'found', secret: result.data.data.secret };
    return result.response.status === 404 ? { kind: 'missing' } : { kind: 'unavailable' };
  } catch (error) {
    deps.logger.warn({ err: error, workspaceId, provider }, 'workspace provider credential unavailable');
    return { kind: 'unavailable' };
  }
}

async function recordCall(
  deps: WorkflowDeps,
  caller: AssistCaller,
  settings: AssistSettings,
  call: {
    trigger: string;
    outcome: AssistOutcome;
    suggestion: AssistanceExplanation['suggestion'];
    latencyMs: number | null;
    tokensIn: number;
    tokensOut: number;
    promptSha256: string;
    prompt: string | null;
    contractsOffered: number;
  },
): Promise<void> {
  await deps.audit.record({
    workspaceId: caller.project.workspace.id,
    projectId: caller.project.id,
    actor: caller.actor,
    action: 'assistance.called',
    targetType: 'project',
    targetId: caller.project.id,
    data: {
      provider: settings.provider,
      model: settings.model,
      trigger: call.trigger,
      outcome: call.outcome,
      tokens_in: call.tokensIn,
      tokens_out: call.tokensOut,
      latency_ms: call.latencyMs,
      suggestion: call.suggestion,
      contracts_offered: call.contractsOffered,
      prompt_sha256: call.promptSha256,
      prompt: call.prompt,
    },
    ...(caller.requestId ? { requestId: caller.requestId } : {}),
  });
}
