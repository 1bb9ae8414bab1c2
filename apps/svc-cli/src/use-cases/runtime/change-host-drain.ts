import { createHubClient, unwrap } from '@svc/contracts';
import type { HubApi } from '@svc/contracts';
import type { ProfileStore } from '../../data/profile-store';
import { CliError } from '../../domain/cli-error';

type RuntimeHost = HubApi.components['schemas']['RuntimeHost'];

export interface HostDrainReport {
  runtime_instance_id: string;
  drain: NonNullable<RuntimeHost['drain']>;
  running_agents: number | null;
  /** With `--wait`: how long the drain took to finish, in seconds. */
  waited_seconds: number | null;
}

const POLL_MS = 1_000;

/** The hub, the host and the runtime key this profile runs with (as `svc runtime status` finds them). */
async function hostClient(input: { store: ProfileStore; env: NodeJS.ProcessEnv; clientName: string }) {
  const profile = await input.store.read();
  const secrets = await input.store.readRuntimeSecrets();
  const hubUrl = profile.hub_url;
  const hostId = input.env.SVC_RUNTIME_INSTANCE_ID?.trim() || profile.runtime?.runtime_instance_id;
  const apiKey = input.env.SVC_WORKSPACE_API_KEY || secrets.SVC_WORKSPACE_API_KEY;
  if (!hubUrl || !hostId || !apiKey) {
    throw new CliError({
      code: 'runtime_not_configured',
      message: !hubUrl
        ? 'no hub URL in this profile'
        : !hostId
          ? 'no runtime host id in this profile'
          : 'no runtime key in this profile',
      fix: 'pull the runtime config on this host first: svc config pull-runtime',
    });
  }
  return { hostId, client: createHubClient({ baseUrl: hubUrl, apiKey, clientName: input.clientName }) };
}

async function runningAgents(
  client: ReturnType<typeof createHubClient>,
  hostId: string,
  workspace: string,
): Promise<number | null> {
  const res = await client.GET('/api/v1/workspaces/{workspace}/networks', {
    params: { path: { workspace } },
    signal: AbortSignal.timeout(10_000),
  });
  return res.data?.data.hosts.find((h) => h.runtime_instance_id === hostId)?.running_agents ?? null;
}

/**
 * `svc runtime drain` / `svc runtime resume`: asks the hub to drain this profile's host (or to end its drain)
 * with the host's runtime key. The running `svc runtime up` follows within a heartbeat: while draining, its
 * relay refuses spawns and it stops each agent once the agent holds no open stage. With `waitMs`, a drain
 * waits until the hub reports the host drained (or fails with `drain_timeout`).
 */
export async function changeHostDrain(input: {
  store: ProfileStore;
  env: NodeJS.ProcessEnv;
  clientName: string;
  action: 'drain' | 'resume';
  waitMs?: number;
  progress?: <R>(label: string, work: () => Promise<R>) => Promise<R>;
}): Promise<HostDrainReport> {
  const { hostId, client } = await hostClient(input);
  const path =
    input.action === 'drain'
      ? ('/api/v1/runtime-hosts/{hostId}/drain' as const)
      : ('/api/v1/runtime-hosts/{hostId}/resume' as const);
  let host = unwrap(
    await client.POST(path, { params: { path: { hostId } }, signal: AbortSignal.timeout(10_000) }),
  );
  const startedAt = Date.now();
  const waitMs = input.action === 'drain' ? input.waitMs : undefined;
  if (waitMs !== undefined && host.drain?.state !== 'drained') {
    const wait = async () => {
      const deadline = startedAt + waitMs;
      while (host.drain?.state !== 'drained') {
        if (Date.now() > deadline) {
          throw new CliError({
            code: 'drain_timeout',
            message: `host ${hostId} is still draining after ${Math.round(waitMs / 1000)} s`,
            fix: 'its agents still hold stages; see the Networks page, or wait longer: svc runtime drain --wait --timeout 30m',
          });
        }
        await new Promise((resolve) => setTimeout(resolve, POLL_MS));
        host = unwrap(
          await client.GET('/api/v1/runtime-hosts/{hostId}', {
            params: { path: { hostId } },
            signal: AbortSignal.timeout(10_000),
          }),
        );
      }
    };
    await (input.progress ? input.progress(`Draining ${hostId}`, wait) : wait());
  }
  const profile = await input.store.read();
  const running = profile.workspace
    ? await runningAgents(client, hostId, profile.workspace).catch(() => null)
    : null;
  return {
    runtime_instance_id: hostId,
    drain: host.drain ?? { state: 'active', requested_at: null, requested_by: null, drained_at: null },
    running_agents: running,
    waited_seconds: waitMs !== undefined ? Math.round((Date.now() - startedAt) / 100) / 10 : null,
  };
}
