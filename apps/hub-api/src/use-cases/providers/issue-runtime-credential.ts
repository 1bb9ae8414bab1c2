import type { Actor } from '@svc/auth';
import { AppError, newId } from '@svc/service-kit';
import type { HubDeps } from '../../deps';
import type { Agent } from '../../generated/prisma/client';
import { requireProviderModel } from '../../data/provider-models.lookups';

/** Runtime credentials are short-lived whatever the configuration says (spec: at most 15 minutes). */
export const MAX_RUNTIME_CREDENTIAL_TTL_SECONDS = 900;

export const AUTHORIZATION_SOURCES = ['hub_managed', 'workspace_provider', 'server_local'] as const;
export type AuthorizationSource = (typeof AUTHORIZATION_SOURCES)[number];
export type LaunchPath = 'direct' | 'relay';

interface IssueRuntimeCredentialCommon {
  agent: Agent;
  /** Exact `provider/model` identifier from the catalog. */
  model: string;
  actor: Actor | undefined;
  requestId?: string;
}

/**
 * `issued` (the default): the one credential of a start, bound to its launch path. `refreshed`: a running
 * agent renews its credential before it expires; a refresh is not a launch, so it carries no launch path, and
 * its model comes from stored state, so a model that left the catalog is a 409.
 */
export type IssueRuntimeCredentialInput = IssueRuntimeCredentialCommon &
  (
    | {
        event?: 'issued';
        launchPath: LaunchPath;
        /** The relay spawn of this start, when it is one. */
        spawnId?: string;
      }
    | { event: 'refreshed'; launchPath?: never; spawnId?: never }
  );

/** The audit action of each kind of issuance. */
export const RUNTIME_CREDENTIAL_ACTIONS = {
  issued: 'credential.runtime.issued',
  refreshed: 'credential.runtime.refreshed',
} as const;

export interface RuntimeCredential {
  /** ES256 JWT, audience `runtime`, subject the agent id. */
  token: string;
  expiresAt: Date;
  provider: string;
  model: string;
  authorizationSource: AuthorizationSource;
  credentialId: string;
}

/**
 * Where the provider authorization for a runtime credential comes from, in the spec's order: the hub's own
 * hosted authorization, else the workspace's provider credential, else server-local auth when the
 * break-glass setting allows it. Null when none is available.
 */
async function resolveAuthorizationSource(
  deps: Pick<HubDeps, 'db' | 'settings'>,
  workspaceId: string,
  provider: string,
): Promise<AuthorizationSource | null> {
  if (deps.settings.hubManagedProviders.includes(provider)) return 'hub_managed';
  const workspaceCredential = await deps.db.providerCredential.findUnique({
    where: { workspaceId_provider: { workspaceId, provider } },
    select: { id: true },
  });
  if (workspaceCredential) return 'workspace_provider';
  if (deps.settings.serverLocalProviderAuth) return 'server_local';
  return null;
}

/**
 * Issues the short-lived runtime credential an agent's runtime uses to reach its provider/model, for a direct
 * CLI start or a relay spawn, or as the refresh of a running agent's credential. The credential binds the
 * agent, its runtime host, the exact provider/model, the authorization source and (at a start) the launch path;
 * it never carries the provider secret itself. Every issuance is recorded as one audit event naming the
 * authorization source (never the token): `credential.runtime.issued` at a start, `credential.runtime.refreshed`
 * for a refresh, so a start still shows exactly one issuance.
 */
export async function issueRuntimeCredential(
  deps: HubDeps,
  input: IssueRuntimeCredentialInput,
): Promise<RuntimeCredential> {
  const { agent } = input;
  if (agent.status === 'evicted') {
    throw new AppError({
      status: 409,
      code: 'agent_evicted',
      detail: `Agent '${agent.id}' is evicted; an evicted agent gets no runtime credential.`,
    });
  }
  const event = input.event ?? 'issued';
  const catalogEntry = await requireProviderModel(deps.db, input.model, {
    status: event === 'refreshed' ? 409 : 400,
  });
  const source = await resolveAuthorizationSource(deps, agent.workspaceId, catalogEntry.provider);
  if (!source) {
    throw new AppError({
      status: 409,
      code: 'provider_credential_unavailable',
      detail: `No authorization is available for provider '${catalogEntry.provider}': the hub does not manage it and the workspace has no provider credential for it.`,
      extra: {
        provider: catalogEntry.provider,
        recommended_action: `A workspace owner or admin sets one with PUT /api/v1/workspaces/{workspace}/provider-credentials/${catalogEntry.provider}, or an operator enables hub-managed authorization for '${catalogEntry.provider}' (HUB_MANAGED_PROVIDERS).`,
      },
    });
  }
  const launchPath = input.launchPath ? { launch_path: input.launchPath } : {};
  const spawn = input.spawnId !== undefined ? { spawn_id: input.spawnId } : {};
  const credentialId = newId('rcd');
  const ttlSeconds = Math.min(deps.settings.runtimeCredentialTtlSeconds, MAX_RUNTIME_CREDENTIAL_TTL_SECONDS);
  const issued = deps.keys.issuer.issue({
    audience: 'runtime',
    subject: agent.id,
    ttlSeconds,
    claims: {
      workspace_id: agent.workspaceId,
      runtime_instance_id: agent.runtimeInstanceId,
      provider: catalogEntry.provider,
      model: catalogEntry.id,
      authorization_source: source,
      ...launchPath,
      credential_id: credentialId,
    },
  });
  await deps.audit.record({
    workspaceId: agent.workspaceId,
    actor: input.actor,
    action: RUNTIME_CREDENTIAL_ACTIONS[event],
    targetType: 'agent',
    targetId: agent.id,
    data: {
      credential_id: credentialId,
      provider: catalogEntry.provider,
      model: catalogEntry.id,
      authorization_source: source,
      ...launchPath,
      ...spawn,
      expires_at: issued.expiresAt.toISOString(),
    },
    requestId: input.requestId,
  });
  deps.logger.info(
    {
      agent_id: agent.id,
      credential_id: credentialId,
      provider: catalogEntry.provider,
      authorization_source: source,
      ...launchPath,
    },
    `runtime credential ${event}`,
  );
  return {
    token: issued.token,
    expiresAt: issued.expiresAt,
    provider: catalogEntry.provider,
    model: catalogEntry.id,
    authorizationSource: source,
    credentialId,
  };
}
