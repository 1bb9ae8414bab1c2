import { createHubClient, unwrap } from '@svc/contracts';
import type { HubApi } from '@svc/contracts';
import type { RuntimeControlStatus } from '../../data/control-server';
import type { ProfileStore } from '../../data/profile-store';
import { controlSocketPath, createRuntimeControlClient } from '../../data/runtime-control-client';
import { readBundle } from '../../data/runtime-files';
import { redactText } from '../../domain/redact';
import { toCliError } from '../../domain/to-cli-error';

export interface RuntimeStatusReport {
  profile: string;
  bundle: {
    path: string;
    bundle_id: string | null;
    workspace: string | null;
    hub_url: string | null;
    /** Whether the bundle carries these secrets (their values are never shown). */
    has_workspace_api_key: boolean;
    has_relay_token: boolean;
  } | null;
  configured: { hub_url: string | null; workspace: string | null; runtime_instance_id: string | null };
  local:
    | { running: true; socket: string; status: RuntimeControlStatus }
    | { running: false; socket: string; detail: string };
  hub:
    | {
        reachable: true;
        host_id: string;
        last_heartbeat_at: string | null;
        heartbeat_age_seconds: number | null;
        readiness: HubApi.components['schemas']['RuntimeHostReadiness'];
        runtime_version: string | null;
        bundles: string[];
      }
    | { reachable: false; detail: string };
}

/** Reads the control socket's `GET /status`; `running: false` with a reason when nothing answers. */
export async function readControlStatus(
  stateDir: string,
  timeoutMs = 5_000,
): Promise<
  | { running: true; socket: string; status: RuntimeControlStatus }
  | { running: false; socket: string; detail: string }
> {
  const socket = controlSocketPath(stateDir);
  try {
    const res = await createRuntimeControlClient(socket, timeoutMs).GET('/status');
    if (res.data) return { running: true, socket, status: res.data };
    return { running: false, socket, detail: `the control socket answered HTTP ${res.response.status}` };
  } catch (error) {
    // The system error, as the control client's fetch gives it (its cause).
    const failed = error as NodeJS.ErrnoException & { cause?: NodeJS.ErrnoException };
    const code = failed.cause?.code ?? failed.code;
    const detail =
      code === 'ENOENT'
        ? `no control socket at ${socket}`
        : `nothing answers on ${socket}${code ? ` (${code})` : ''}`;
    return { running: false, socket, detail };
  }
}

/**
 * `svc runtime status`: what the bundle says, whether `runtime up` runs here, and the host as the hub sees it
 * (heartbeat age, readiness). Shows no secret.
 */
export async function readRuntimeStatus(input: {
  store: ProfileStore;
  profile: string;
  env: NodeJS.ProcessEnv;
  bundlePath?: string | undefined;
  clientName: string;
}): Promise<RuntimeStatusReport> {
  const profile = await input.store.read();
  const secrets = await input.store.readRuntimeSecrets();
  const bundle = input.bundlePath ? await readBundle(input.bundlePath) : null;
  const hubUrl = profile.hub_url ?? bundle?.hub_url ?? null;
  const hostId = input.env.SVC_RUNTIME_INSTANCE_ID?.trim() || profile.runtime?.runtime_instance_id || null;
  const local = await readControlStatus(input.store.paths.state_dir);
  const apiKey =
    input.env.SVC_WORKSPACE_API_KEY || secrets.SVC_WORKSPACE_API_KEY || bundle?.workspace_api_key;
  let hub: RuntimeStatusReport['hub'];
  if (!hubUrl || !hostId || !apiKey) {
    hub = {
      reachable: false,
      detail: !hubUrl
        ? 'no hub URL (svc login)'
        : !hostId
          ? 'no host id (svc config pull-runtime or SVC_RUNTIME_INSTANCE_ID)'
          : 'no runtime key (svc config pull-runtime)',
    };
  } else if (hostId.startsWith('wrt_')) {
    hub = {
      reachable: false,
      detail: `${hostId} is a bundle id; set SVC_RUNTIME_INSTANCE_ID to the host's rti_… id`,
    };
  } else {
    try {
      const client = createHubClient({ baseUrl: hubUrl, apiKey, clientName: input.clientName });
      const host = unwrap(
        await client.GET('/api/v1/runtime-hosts/{hostId}', {
          params: { path: { hostId } },
          signal: AbortSignal.timeout(10_000),
        }),
      );
      hub = {
        reachable: true,
        host_id: host.id,
        last_heartbeat_at: host.last_heartbeat_at,
        heartbeat_age_seconds: host.last_heartbeat_at
          ? Math.max(0, Math.round((Date.now() - Date.parse(host.last_heartbeat_at)) / 1000))
          : null,
        readiness: host.readiness,
        runtime_version: host.runtime_version,
        bundles: host.bundles,
      };
    } catch (error) {
      hub = { reachable: false, detail: redactText(toCliError(error).message) };
    }
  }
  return {
    profile: input.profile,
    bundle: bundle && {
      path: bundle.path,
      bundle_id: bundle.bundle_id,
      workspace: bundle.workspace,
      hub_url: bundle.hub_url,
      has_workspace_api_key: !!bundle.workspace_api_key,
      has_relay_token: !!bundle.relay_token,
    },
    configured: {
      hub_url: hubUrl,
      workspace: profile.workspace ?? bundle?.workspace ?? null,
      runtime_instance_id: hostId,
    },
    local,
    hub,
  };
}
