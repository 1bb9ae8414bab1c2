import { unwrap } from '@svc/contracts';
import type { HubClient } from '@svc/contracts';
import type { ProfileStore } from '../../data/profile-store';
import { ensureOwnerOnlyDir } from '../../data/secret-files';
import { CliError } from '../../domain/cli-error';
import { localServiceUrl } from '../../domain/doctor-checks';

export interface PullRuntimeResult {
  runtime_instance_id: string;
  workspace: string;
  pulled_at: string;
  agent_workdir_root: string;
  console_router: { public_base_url: string; local_url: string; route_prefix: string };
  relay: { local_url: string; public_url: string | null };
  profile_path: string;
  runtime_env_path: string;
  /** Names (never values) of the secrets written to the runtime env file. */
  stored_secrets: string[];
}

/**
 * The `runtime_instance_id` to ask for, from `SVC_RUNTIME_INSTANCE_ID` when set: an inventory id (`rti_…`);
 * a runtime bundle id (`wrt_…`) is refused before anything is sent.
 */
export function runtimeInstanceIdFromEnv(value: string | undefined): string | undefined {
  const id = value?.trim();
  if (!id) return undefined;
  if (id.startsWith('wrt_')) {
    throw new CliError({
      code: 'runtime_bundle_id_not_allowed',
      message: `SVC_RUNTIME_INSTANCE_ID is a runtime bundle id (${id}); a host is named by its inventory id (rti_…)`,
      fix: 'set SVC_RUNTIME_INSTANCE_ID to the host id shown in Networks (rti_…), or unset it',
    });
  }
  if (!id.startsWith('rti_')) {
    throw new CliError({
      code: 'runtime_instance_id_invalid',
      message: `SVC_RUNTIME_INSTANCE_ID (${id}) is not an inventory id (rti_…)`,
      fix: 'set SVC_RUNTIME_INSTANCE_ID to the host id shown in Networks (rti_…), or unset it',
    });
  }
  return id;
}

/**
 * `svc config pull-runtime`: fetches the host's runtime config with the participant token (the hub audits the
 * pull and mints the host's runtime key), keeps its non-secret part in the profile with `pulled_at`, and writes
 * the relay token and workspace API key to the runtime env file (0600, in a 0700 directory).
 */
export async function pullRuntimeConfig(input: {
  hub: HubClient;
  workspace: string;
  store: ProfileStore;
  runtimeInstanceId: string | undefined;
}): Promise<PullRuntimeResult> {
  const config = unwrap(
    await input.hub.GET('/api/v1/workspaces/{workspace}/infrastructure/runtime-config', {
      params: {
        path: { workspace: input.workspace },
        query: input.runtimeInstanceId ? { runtime_instance_id: input.runtimeInstanceId } : {},
      },
    }),
  );
  const { auth, ...runtime } = config;
  const pulledAt = new Date().toISOString();
  await ensureOwnerOnlyDir(input.store.paths.config_dir);
  await input.store.writeRuntimeSecrets({
    SVC_RELAY_TOKEN: auth.relay_token,
    SVC_WORKSPACE_API_KEY: auth.workspace_api_key,
  });
  await input.store.update((profile) => ({ ...profile, runtime: { ...runtime, pulled_at: pulledAt } }));
  return {
    runtime_instance_id: runtime.runtime_instance_id,
    workspace: runtime.workspace.slug,
    pulled_at: pulledAt,
    agent_workdir_root: runtime.agent_workdir_root,
    console_router: {
      public_base_url: runtime.consoleRouter.publicBaseUrl,
      local_url: localServiceUrl(runtime.consoleRouter.bindHost, runtime.consoleRouter.listenPort),
      route_prefix: runtime.consoleRouter.routePrefix,
    },
    relay: {
      local_url: localServiceUrl(runtime.relay.bindHost, runtime.relay.listenPort),
      public_url: runtime.relay.publicUrl,
    },
    profile_path: input.store.paths.profile_path,
    runtime_env_path: input.store.paths.runtime_env_path,
    stored_secrets: ['SVC_RELAY_TOKEN', 'SVC_WORKSPACE_API_KEY'],
  };
}
