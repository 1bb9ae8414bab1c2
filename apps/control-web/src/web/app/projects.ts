import { unwrap } from './api';
import { useApi } from './hooks';
import { useClients } from './session';
import { useWorkspace } from './workspace';

/** The current workspace's projects from the hub (`listProjects`), loaded once per workspace. */
export function useWorkspaceProjects() {
  const { workspace } = useWorkspace();
  const { hub } = useClients();
  return useApi(
    (signal) =>
      hub.raw
        .GET('/api/v1/workspaces/{workspace}/projects', {
          params: { path: { workspace: workspace.id } },
          signal,
        })
        .then(unwrap),
    [workspace.id],
  );
}
