import { readAssistBudget } from '../../data/assist-budget';
import type { BudgetUsage } from '../../data/assist-budget';
import { loadAssistSettings } from '../../data/assist-settings.lookups';
import type { WorkflowDeps } from '../../deps';

/** Calls and tokens the project's model assistance used this UTC day and month, against its ceilings. */
export async function getAssistanceBudget(deps: WorkflowDeps, projectId: string): Promise<BudgetUsage> {
  const settings = await loadAssistSettings(deps.db, projectId);
  return readAssistBudget(deps.db, projectId, settings.budget, deps.now());
}
