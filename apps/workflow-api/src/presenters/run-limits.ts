import type { WorkflowApi } from '@svc/contracts';
import type { RunLimitsView } from '../use-cases/run-limits/get-run-limits';

type RunLimitsBody = WorkflowApi.components['schemas']['RunLimits'];

export function presentRunLimits(
  project: { id: string; workspace: { id: string } },
  view: RunLimitsView,
): RunLimitsBody {
  return {
    project_id: project.id,
    workspace_id: project.workspace.id,
    project_max_runs_in_progress: view.limits.project,
    workspace_max_runs_in_progress: view.limits.workspace,
    project_runs_in_progress: view.inProgress.project,
    workspace_runs_in_progress: view.inProgress.workspace,
    queued: view.queued,
  };
}
