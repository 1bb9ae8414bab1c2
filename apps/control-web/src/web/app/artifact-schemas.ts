import { unwrap } from './api';
import { useApi } from './hooks';
import { useClients } from './session';
import { useWorkspace } from './workspace';

/** A project's artifact schemas from the Workflow API (`listArtifactSchemas`, up to 200), loaded once. */
export function useProjectArtifactSchemas(projectId: string) {
  const { workspace } = useWorkspace();
  const { workflow } = useClients();
  return useApi(
    (signal) =>
      workflow.raw
        .GET('/api/v1/workspaces/{workspaceId}/artifact-schemas', {
          params: { path: { workspaceId: workspace.id }, query: { project_id: projectId, limit: 200 } },
          signal,
        })
        .then(unwrap),
    [workspace.id, projectId],
  );
}
