import { unwrap } from '@svc/contracts';
import type { HubClient } from '@svc/contracts';
import type { ProfileStore } from '../../data/profile-store';
import { ensureOwnerOnlyDir } from '../../data/secret-files';
import { CliError, usageError } from '../../domain/cli-error';
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
  /** The host's runtime key this profile now holds (id and prefix only), and whether this pull rotated it. */
  runtime_key: {
    id: string | null;
    prefix: string | null;
    rotated: boolean;
    /** After a rotation: until when the key it superseded stays valid (null: none, or revoked at once). */
    previous_valid_until: string | null;
  };
}

/** `--overlap`: `0`, or a number with `s`, `m`, `h` or `d` (`24h`, `90m`); in seconds, at most 7 days. */
export function parseOverlap(value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const match = /^(\d{1,7})([smhd]?)$/.exec(value.trim());
  const unit = { '': 1, s: 1, m: 60, h: 3600, d: 86400 }[match?.[2] ?? ''] ?? 1;
  const seconds = match ? Number(match[1]) * unit : NaN;
  if (!Number.isInteger(seconds) || seconds > 7 * 86400) {
    throw usageError(
      'overlap_invalid',
      `--overlap ${value} is not a duration of at most 7 days`,
      'pass 0 (revoke the previous key now) or a duration such as 24h, 90m or 3600s',
    );
  }
  return seconds;
}

/** The prefix of a `svc_<prefix>_<secret>` key (never the secret). */
const keyPrefix = (key: string | undefined) => (key ? (/^svc_([a-z0-9]+)_/.exec(key)?.[1] ?? null) : null);

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
 * `svc config pull-runtime`: reads the host's runtime config with the participant token (a read mints and
 * revokes nothing), keeps its non-secret part in the profile with `pulled_at`, and writes the relay token and
 * the runtime key to the runtime env file (0600, in a 0700 directory). The runtime key this profile already
 * holds is kept while the hub lists it as the host's current key; otherwise, or with `rotateKey`, the hub
 * issues a new one and the previous key stays valid for the overlap window (default 24 h, `0` revokes it
 * now). A `svc runtime up` of this profile switches to the new key by itself.
 */
export async function pullRuntimeConfig(input: {
  hub: HubClient;
  workspace: string;
  store: ProfileStore;
  runtimeInstanceId: string | undefined;
  /** Issue a new runtime key even when the profile holds the host's current one. */
  rotateKey?: boolean;
  /** How long the previous key stays valid after a rotation, in seconds (hub default 24 h). */
  overlapSeconds?: number;
}): Promise<PullRuntimeResult> {
  const read = unwrap(
    await input.hub.GET('/api/v1/workspaces/{workspace}/infrastructure/runtime-config', {
      params: {
        path: { workspace: input.workspace },
        query: input.runtimeInstanceId ? { runtime_instance_id: input.runtimeInstanceId } : {},
      },
    }),
  );
  const profile = await input.store.read();
  const held = (await input.store.readRuntimeSecrets()).SVC_WORKSPACE_API_KEY;
  const current = read.runtime_key?.current ?? null;
  const keepHeld =
    !input.rotateKey &&
    held !== undefined &&
    current !== null &&
    profile.runtime?.runtime_instance_id === read.runtime_instance_id &&
    keyPrefix(held) === current.prefix;
  const config = keepHeld
    ? read
    : unwrap(
        await input.hub.POST('/api/v1/workspaces/{workspace}/infrastructure/runtime-config/rotate', {
          params: { path: { workspace: input.workspace } },
          body: {
            runtime_instance_id: read.runtime_instance_id,
            ...(input.overlapSeconds !== undefined ? { overlap_seconds: input.overlapSeconds } : {}),
          },
        }),
      );
  const apiKey = keepHeld ? held : config.auth.workspace_api_key;
  if (!apiKey) {
    throw new CliError({
      code: 'runtime_key_missing',
      message: 'the hub answered the runtime config without a runtime key',
      fix: 'pull again: svc config pull-runtime --rotate-key',
    });
  }
  const { auth, runtime_key: runtimeKey, ...runtime } = config;
  const pulledAt = new Date().toISOString();
  await ensureOwnerOnlyDir(input.store.paths.config_dir);
  await input.store.writeRuntimeSecrets({
    SVC_RELAY_TOKEN: auth.relay_token,
    SVC_WORKSPACE_API_KEY: apiKey,
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
    runtime_key: {
      id: runtimeKey?.current.id ?? null,
      prefix: runtimeKey?.current.prefix ?? null,
      rotated: !keepHeld,
      previous_valid_until: keepHeld ? null : (runtimeKey?.previous?.valid_until ?? null),
    },
  };
}
