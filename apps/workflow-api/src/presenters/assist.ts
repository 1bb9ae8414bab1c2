import type { WorkflowApi } from '@svc/contracts';
import type { BudgetPeriodUsage, BudgetUsage } from '../data/assist-budget';
import { assistSettingsFields } from '../domain/assist-settings';
import type { AssistSettings } from '../domain/assist-settings';
import type { AuditEvent } from '../generated/prisma/client';

type Schemas = WorkflowApi.components['schemas'];

export function presentAssistSettings(s: AssistSettings): Schemas['AssistanceSettings'] {
  return {
    project_id: s.projectId,
    ...assistSettingsFields(s),
    revision: s.revision,
    updated_at: s.updatedAt ? s.updatedAt.toISOString() : null,
  };
}

function presentPeriod(p: BudgetPeriodUsage): Schemas['AssistanceBudgetPeriod'] {
  return {
    period_start: p.period.start,
    resets_at: p.period.resetsAt.toISOString(),
    calls_used: p.calls,
    calls_limit: p.callsLimit,
    tokens_used: p.tokens,
    tokens_limit: p.tokensLimit,
    warning: p.warning,
    exhausted: p.exhausted,
  };
}

export function presentAssistBudget(projectId: string, b: BudgetUsage): Schemas['AssistanceBudget'] {
  return {
    project_id: projectId,
    warning_percent: b.warningPercent,
    warning: b.warning,
    exhausted: b.exhausted,
    day: presentPeriod(b.day),
    month: presentPeriod(b.month),
  };
}

export function presentAssistCall(event: AuditEvent): Schemas['AssistanceCall'] {
  const d = (event.data ?? {}) as Record<string, unknown>;
  const num = (v: unknown) => (typeof v === 'number' ? v : 0);
  return {
    call_id: event.id,
    created_at: event.createdAt.toISOString(),
    actor_kind: event.actorKind,
    actor_id: event.actorId,
    provider: String(d.provider ?? ''),
    model: String(d.model ?? ''),
    trigger: String(d.trigger ?? ''),
    outcome: d.outcome as Schemas['AssistanceOutcome'],
    tokens_in: num(d.tokens_in),
    tokens_out: num(d.tokens_out),
    latency_ms: typeof d.latency_ms === 'number' ? d.latency_ms : null,
    suggestion: (d.suggestion as Schemas['AssistanceSuggestion'] | null) ?? null,
    prompt_sha256: String(d.prompt_sha256 ?? ''),
    prompt: typeof d.prompt === 'string' ? d.prompt : null,
  };
}
