import type { Actor } from '@svc/auth';
import { bundlesByHost, findRuntimeHostFor } from '../../data/runtime-hosts.lookups';
import type { HubDeps } from '../../deps';
import type { RuntimeHost } from '../../generated/prisma/client';

/** A runtime host with the runtime bundles it has reported, most recently seen first. */
export interface RuntimeHostWithBundles {
  host: RuntimeHost;
  bundles: string[];
}

/**
 * A runtime host addressed by its inventory id that the actor can see, with its bundles; a host of another
 * workspace (or a missing one) is reported as not found, a runtime bundle id (`wrt_…`) is refused.
 */
export async function getRuntimeHost(
  deps: Pick<HubDeps, 'db'>,
  actor: Actor | undefined,
  hostId: string,
): Promise<RuntimeHostWithBundles> {
  const host = await findRuntimeHostFor(deps.db, actor, hostId);
  const bundles = await bundlesByHost(deps.db, [host.id]);
  return { host, bundles: bundles.get(host.id) ?? [] };
}
