import type { Actor } from '@svc/auth';
import { generateOpaqueToken, hashOpaqueToken } from '@svc/auth';
import { AppError, newId } from '@svc/service-kit';
import { isUniqueViolation } from '../../db';
import type { HubDeps } from '../../deps';
import type { RuntimeHost } from '../../generated/prisma/client';
import { normalizePublicUrl, normalizeWorkdirRoot } from '../../domain/runtime-host-settings';

export const DEFAULT_CONSOLE_ROUTER = { bindHost: '127.0.0.1', listenPort: 8790, routePrefix: '' };
export const DEFAULT_RELAY = { bindHost: '127.0.0.1', listenPort: 8787 };

export interface RegisterRuntimeHostInput {
  name: string;
  hostname?: string;
  workdirRoot: string;
  consolePublicBaseUrl: string;
  relayPublicUrl?: string;
  consoleRouter?: { bindHost?: string; listenPort?: number; routePrefix?: string };
  relay?: { bindHost?: string; listenPort?: number };
  /** The host's own spawn limits (null or absent: none). */
  limits?: { maxConcurrentSpawns?: number | null; maxAgents?: number | null };
  requestId?: string;
}

/** Addresses that listen on every interface, so they collide with any bind host on the same port. */
const WILDCARD_BIND_HOSTS = new Set(['0.0.0.0', '::', '[::]']);

function sameListener(
  a: { bindHost: string; listenPort: number },
  b: { bindHost: string; listenPort: number },
) {
  if (a.listenPort !== b.listenPort) return false;
  const hostA = a.bindHost.toLowerCase();
  const hostB = b.bindHost.toLowerCase();
  return hostA === hostB || WILDCARD_BIND_HOSTS.has(hostA) || WILDCARD_BIND_HOSTS.has(hostB);
}

/**
 * Adds a runtime host to the workspace inventory under a new inventory id (`rti_…`) and gives it a relay
 * token. The token is returned once; the hub keeps its SHA-256 (to check it) and a sealed copy (to send it
 * to the relay and hand it to operators in the runtime config).
 */
export async function registerRuntimeHost(
  deps: HubDeps,
  actor: Actor,
  workspaceId: string,
  input: RegisterRuntimeHostInput,
): Promise<{ host: RuntimeHost; relayToken: string }> {
  const workdirRoot = normalizeWorkdirRoot(input.workdirRoot);
  const consolePublicBaseUrl = normalizePublicUrl(input.consolePublicBaseUrl, 'console_public_base_url');
  const relayPublicUrl =
    input.relayPublicUrl === undefined ? null : normalizePublicUrl(input.relayPublicUrl, 'relay_public_url');
  const consoleRouter = { ...DEFAULT_CONSOLE_ROUTER, ...input.consoleRouter };
  const relay = { ...DEFAULT_RELAY, ...input.relay };
  if (sameListener(consoleRouter, relay)) {
    throw new AppError({
      status: 400,
      code: 'runtime_port_conflict',
      detail: `The console router and the relay cannot both listen on ${relay.bindHost}:${relay.listenPort}.`,
      extra: { field: 'relay/listen_port' },
    });
  }

  const id = newId('rti');
  const relayToken = generateOpaqueToken('rly');
  try {
    const host = await deps.db.$transaction(async (tx) => {
      const created = await tx.runtimeHost.create({
        data: {
          id,
          workspaceId,
          name: input.name,
          hostname: input.hostname ?? null,
          workdirRoot,
          consolePublicBaseUrl,
          relayPublicUrl,
          consoleBindHost: consoleRouter.bindHost,
          consoleListenPort: consoleRouter.listenPort,
          consoleRoutePrefix: consoleRouter.routePrefix,
          relayBindHost: relay.bindHost,
          relayListenPort: relay.listenPort,
          relayTokenHash: hashOpaqueToken(relayToken),
          relayTokenCiphertext: deps.box.seal(relayToken, id),
          relayTokenRotatedAt: deps.now(),
          maxConcurrentSpawns: input.limits?.maxConcurrentSpawns ?? null,
          maxAgents: input.limits?.maxAgents ?? null,
        },
      });
      await deps.audit.record(
        {
          workspaceId,
          actor,
          action: 'runtime_host.registered',
          targetType: 'runtime_host',
          targetId: id,
          data: {
            name: created.name,
            hostname: created.hostname,
            workdir_root: created.workdirRoot,
            console_public_base_url: created.consolePublicBaseUrl,
            relay_public_url: created.relayPublicUrl,
            max_concurrent_spawns: created.maxConcurrentSpawns,
            max_agents: created.maxAgents,
          },
          requestId: input.requestId,
        },
        tx,
      );
      await deps.audit.record(
        {
          workspaceId,
          actor,
          action: 'credential.relay_token.issued',
          targetType: 'runtime_host',
          targetId: id,
          data: { runtime_instance_id: id },
          requestId: input.requestId,
        },
        tx,
      );
      return created;
    });
    return { host, relayToken };
  } catch (error) {
    if (isUniqueViolation(error)) {
      throw new AppError({
        status: 409,
        code: 'runtime_host_name_taken',
        detail: `A runtime host named '${input.name}' already exists in this workspace.`,
      });
    }
    throw error;
  }
}
