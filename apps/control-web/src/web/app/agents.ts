import { unwrap } from './api';
import { usePolling } from './hooks';
import { useClients } from './session';
import { useWorkspace } from './workspace';

/** The current workspace's agents from the hub (`listAgents`), read again every `intervalMs` (0: once). */
export function useWorkspaceAgents(intervalMs: number) {
  const { workspace } = useWorkspace();
  const { hub } = useClients();
  return usePolling(
    (signal) =>
      hub.raw
        .GET('/api/v1/workspaces/{workspace}/agents', {
          params: { path: { workspace: workspace.id } },
          signal,
        })
        .then(unwrap),
    intervalMs,
    [workspace.id],
  );
}
