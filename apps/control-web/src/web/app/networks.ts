import { unwrap } from './api';
import { usePolling } from './hooks';
import { useClients } from './session';
import { useWorkspace } from './workspace';

/** The current workspace's Networks view from the hub (`getNetworks`), read again every `intervalMs`. */
export function useWorkspaceNetworks(intervalMs: number) {
  const { workspace } = useWorkspace();
  const { hub } = useClients();
  return usePolling(
    (signal) =>
      hub.raw
        .GET('/api/v1/workspaces/{workspace}/networks', {
          params: { path: { workspace: workspace.id } },
          signal,
        })
        .then(unwrap),
    intervalMs,
    [workspace.id],
  );
}
