import { loadAssistSettings } from '../../data/assist-settings.lookups';
import type { WorkflowDeps } from '../../deps';
import type { AssistSettings } from '../../domain/assist-settings';

/** The project's model-assistance settings (every default, assistance off, when never set). */
export function getAssistanceSettings(deps: WorkflowDeps, projectId: string): Promise<AssistSettings> {
  return loadAssistSettings(deps.db, projectId);
}
