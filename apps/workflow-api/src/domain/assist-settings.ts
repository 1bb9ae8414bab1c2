/**
 * Model assistance for resolve (decision 48): the settings a project starts with, the rules a change must obey,
 * and the UTC budget periods. No database here.
 */
import { isIP } from 'node:net';
import { AppError } from '@svc/service-kit';

export interface AssistBudgetLimits {
  callsPerDay: number;
  tokensPerDay: number;
  callsPerMonth: number;
  tokensPerMonth: number;
  warningPercent: number;
}

export interface AssistSettings {
  projectId: string;
  enabled: boolean;
  allowAssistedRouting: boolean;
  dataMayLeaveWorkspace: boolean;
  storePrompts: boolean;
  assistOnTie: boolean;
  provider: string | null;
  model: string | null;
  baseUrl: string | null;
  timeoutMs: number;
  budget: AssistBudgetLimits;
  /** 0 while the project never changed its settings. */
  revision: number;
  updatedAt: Date | null;
}

export const DEFAULT_ASSIST_BUDGET: AssistBudgetLimits = {
  callsPerDay: 200,
  tokensPerDay: 400_000,
  callsPerMonth: 4_000,
  tokensPerMonth: 8_000_000,
  warningPercent: 80,
};

export const DEFAULT_ASSIST_TIMEOUT_MS = 5_000;

/** The answer of the model is capped at this many tokens (`max_tokens`); it is part of every reservation. */
export const ASSIST_MAX_ANSWER_TOKENS = 400;

/** At most this many active contracts (highest priority first) are offered to the model. */
export const ASSIST_MAX_CONTRACTS = 50;

export function defaultAssistSettings(projectId: string): AssistSettings {
  return {
    projectId,
    enabled: false,
    allowAssistedRouting: false,
    dataMayLeaveWorkspace: false,
    storePrompts: false,
    assistOnTie: false,
    provider: null,
    model: null,
    baseUrl: null,
    timeoutMs: DEFAULT_ASSIST_TIMEOUT_MS,
    budget: { ...DEFAULT_ASSIST_BUDGET },
    revision: 0,
    updatedAt: null,
  };
}

const badRequest = (code: string, detail: string) => new AppError({ status: 400, code, detail });

/** True when the base URL's host is this machine (loopback): the intent then never leaves it. */
export function isLoopbackBaseUrl(baseUrl: string): boolean {
  let host: string;
  try {
    host = new URL(baseUrl).hostname.replace(/^\[|\]$/g, '').toLowerCase();
  } catch {
    return false;
  }
  if (host === 'localhost') return true;
  if (isIP(host) === 4) return host.startsWith('127.');
  if (isIP(host) === 6) return host === '::1';
  return false;
}

/** Refuses a settings row that could not be used safely; messages never repeat the URL. */
export function assertUsableAssistSettings(settings: AssistSettings): void {
  if (settings.baseUrl !== null) {
    let url: URL;
    try {
      url = new URL(settings.baseUrl);
    } catch {
      throw badRequest('assistance_base_url_invalid', 'base_url is not an absolute URL.');
    }
    if (url.protocol !== 'https:' && url.protocol !== 'http:') {
      throw badRequest('assistance_base_url_invalid', 'base_url must be an http or https URL.');
    }
    if (url.username || url.password) {
      throw badRequest(
        'assistance_base_url_invalid',
        'base_url must not carry credentials; the workspace provider credential is sent instead.',
      );
    }
    if (url.search || url.hash) {
      throw badRequest('assistance_base_url_invalid', 'base_url must not carry a query or a fragment.');
    }
  }
  if (!settings.enabled) return;
  if (!settings.provider || !settings.model || !settings.baseUrl) {
    throw badRequest(
      'assistance_provider_required',
      'Turning assistance on needs provider, model and base_url.',
    );
  }
  if (!isLoopbackBaseUrl(settings.baseUrl) && !settings.dataMayLeaveWorkspace) {
    throw badRequest(
      'assistance_data_policy_refused',
      'The provider is remote (its base URL is not loopback): set data_may_leave_workspace to send intents to it.',
    );
  }
}

export type BudgetPeriodKind = 'day' | 'month';

export interface BudgetPeriod {
  kind: BudgetPeriodKind;
  /** `YYYY-MM-DD` (UTC) of the period's first day. */
  start: string;
  resetsAt: Date;
}

/** The UTC day and month containing `now`. */
export function budgetPeriods(now: Date): { day: BudgetPeriod; month: BudgetPeriod } {
  const y = now.getUTCFullYear();
  const m = now.getUTCMonth();
  const d = now.getUTCDate();
  const iso = (date: Date) => date.toISOString().slice(0, 10);
  return {
    day: { kind: 'day', start: iso(new Date(Date.UTC(y, m, d))), resetsAt: new Date(Date.UTC(y, m, d + 1)) },
    month: {
      kind: 'month',
      start: iso(new Date(Date.UTC(y, m, 1))),
      resetsAt: new Date(Date.UTC(y, m + 1, 1)),
    },
  };
}

/** Whether usage reached the warning share of a ceiling (a ceiling of 0 is always reached). */
export function atWarning(used: number, limit: number, warningPercent: number): boolean {
  return used * 100 >= limit * warningPercent;
}

/**
 * The settings as callers see them, without identity and revision: the public answer adds those, and a change
 * compares and audits exactly these (never a secret: the provider key stays in the hub).
 */
export function assistSettingsFields(s: AssistSettings) {
  return {
    enabled: s.enabled,
    allow_assisted_routing: s.allowAssistedRouting,
    data_may_leave_workspace: s.dataMayLeaveWorkspace,
    store_prompts: s.storePrompts,
    assist_on_tie: s.assistOnTie,
    provider: s.provider,
    model: s.model,
    base_url: s.baseUrl,
    timeout_ms: s.timeoutMs,
    budget: {
      calls_per_day: s.budget.callsPerDay,
      tokens_per_day: s.budget.tokensPerDay,
      calls_per_month: s.budget.callsPerMonth,
      tokens_per_month: s.budget.tokensPerMonth,
      warning_percent: s.budget.warningPercent,
    },
  };
}
