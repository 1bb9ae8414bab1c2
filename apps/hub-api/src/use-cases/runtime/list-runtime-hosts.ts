import { bundlesByHost } from '../../data/runtime-hosts.lookups';
import type { HubDeps } from '../../deps';
import type { RuntimeHostWithBundles } from './get-runtime-host';

/** The runtime hosts of a workspace (inventory ids in order), each with the bundles it has reported. */
export async function listRuntimeHosts(
  deps: Pick<HubDeps, 'db'>,
  workspaceId: string,
): Promise<RuntimeHostWithBundles[]> {
  const hosts = await deps.db.runtimeHost.findMany({ where: { workspaceId }, orderBy: { id: 'asc' } });
  const bundles = await bundlesByHost(
    deps.db,
    hosts.map((host) => host.id),
  );
  return hosts.map((host) => ({ host, bundles: bundles.get(host.id) ?? [] }));
}
