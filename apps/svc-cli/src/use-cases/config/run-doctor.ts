import path from 'node:path';
import { createHubClient } from '@svc/contracts';
import type { HubApi } from '@svc/contracts';
import { agentDir } from '../../data/agent-state';
import { parseEnvFile } from '../../data/profile-store';
import type { Profile, ProfileStore, RuntimeSecrets } from '../../data/profile-store';
import { listDir, permissionBits, probeHttp, readTextIfExists } from '../../data/doctor-probes';
import type { ProbeAnswer } from '../../data/doctor-probes';
import {
  clockSkewCheck,
  fail,
  fileModesCheck,
  heartbeatCheck,
  localServiceUrl,
  participantExpiryCheck,
  pass,
  runtimeConfigFreshnessCheck,
  runtimeInstanceIdCheck,
  runtimeKeyCheck,
  skewFromDateHeader,
  summarizeChecks,
  workdirRootCheck,
} from '../../domain/doctor-checks';
import type { DoctorCheck, DoctorSummary, FileModeFact } from '../../domain/doctor-checks';
import { resolveCloudflared } from '../../data/tunnel-connector';
import { tunnelConnectorCheck } from '../../domain/tunnel-connector';

type RuntimeHost = HubApi.components['schemas']['RuntimeHost'];

export interface DoctorReport {
  profile: string;
  hub_url: string | null;
  workspace: string | null;
  hub_version: string | null;
  checks: DoctorCheck[];
  summary: DoctorSummary;
}

const LOGIN_FIX = 'svc login --hub-url <url> --workspace <workspace>';
const RUNTIME_UP_FIX = 'start the runtime on this host: svc runtime up';

/** Modes of the config directory, the profile's files and the agents' state, read before anything re-applies them. */
async function fileModeFacts(store: ProfileStore): Promise<FileModeFact[]> {
  const { paths } = store;
  const entries: Array<Omit<FileModeFact, 'mode'>> = [
    { path: paths.config_dir, kind: 'dir' },
    { path: path.dirname(paths.profile_path), kind: 'dir' },
    { path: paths.profile_path, kind: 'file' },
    { path: paths.runtime_env_path, kind: 'file' },
    { path: paths.state_dir, kind: 'dir' },
  ];
  for (const name of await listDir(path.join(paths.state_dir, 'agents'))) {
    const dir = agentDir(paths.state_dir, name);
    entries.push({ path: dir, kind: 'dir' }, { path: path.join(dir, 'state.json'), kind: 'file' });
  }
  return Promise.all(entries.map(async (e) => ({ ...e, mode: await permissionBits(e.path) })));
}

function unreachable(answer: ProbeAnswer): string {
  return answer.error
    ? `${answer.url} did not answer (${answer.error})`
    : `${answer.url} answered HTTP ${answer.status}`;
}

function readinessCheck(id: string, name: string, answer: ProbeAnswer): DoctorCheck {
  if (answer.status === 200) return pass(id, `${name} ready at ${answer.url}`);
  const detail = (answer.body as { checks?: Record<string, string> } | null)?.checks;
  const why = detail
    ? ` (${Object.entries(detail)
        .map(([k, v]) => `${k}: ${v}`)
        .join(', ')})`
    : '';
  return fail(id, `${name} not ready: ${unreachable(answer)}${why}`, RUNTIME_UP_FIX);
}

async function hubGet<T>(
  call: () => Promise<{ data?: { data: T }; response: Response }>,
): Promise<{ status: number | null; data: T | null; error: string | null }> {
  try {
    const res = await call();
    return {
      status: res.response.status,
      data: res.response.ok && res.data ? res.data.data : null,
      error: null,
    };
  } catch (error) {
    const e = error as { cause?: { code?: string }; message?: string };
    return { status: null, data: null, error: e.cause?.code ?? e.message ?? 'failed' };
  }
}

/**
 * `svc config doctor`: every check of this host's configuration, each pass / warn / fail with a one-line fix.
 * Reports only; it changes nothing (the next svc write re-applies file modes).
 */
export async function runDoctor(input: {
  store: ProfileStore;
  env: NodeJS.ProcessEnv;
  clientName: string;
}): Promise<DoctorReport> {
  const { store, env } = input;
  const modes = fileModesCheck(await fileModeFacts(store));
  const now = Date.now();

  // Read without the profile store: it re-applies file modes, and doctor only reports.
  let profile: Profile = {};
  let profileProblem: string | null = null;
  const profileText = await readTextIfExists(store.paths.profile_path);
  if (profileText !== undefined) {
    try {
      const parsed = JSON.parse(profileText) as unknown;
      if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
        throw new Error('not a JSON object');
      profile = parsed as Profile;
    } catch (error) {
      profileProblem = `${store.paths.profile_path} is not a valid svc file (${(error as Error).message})`;
    }
  }
  const envText = await readTextIfExists(store.paths.runtime_env_path);
  const secrets: RuntimeSecrets = envText === undefined ? {} : parseEnvFile(envText);
  const apiKey = env.SVC_WORKSPACE_API_KEY || secrets.SVC_WORKSPACE_API_KEY;
  const runtime = profile.runtime;
  const hubUrl = profile.hub_url;
  const workspace = profile.workspace;
  const checks: DoctorCheck[] = [];
  let hubVersion: string | null = null;
  let skew: number | null = null;

  const relayProbe = runtime
    ? probeHttp(`${localServiceUrl(runtime.relay.bindHost, runtime.relay.listenPort)}/readyz`)
    : undefined;
  const routerProbe = runtime
    ? probeHttp(`${localServiceUrl(runtime.consoleRouter.bindHost, runtime.consoleRouter.listenPort)}/readyz`)
    : undefined;

  let host: RuntimeHost | null = null;
  if (!hubUrl || !workspace) {
    const why = profileProblem ?? `profile "${store.paths.profile}" is not logged in`;
    checks.push(
      fail('hub_reachable', why, profileProblem ? 'svc config reset --yes, then svc login' : LOGIN_FIX),
    );
    checks.push(fail('participant_credential', why, LOGIN_FIX));
  } else {
    const [ready, openapi] = await Promise.all([
      probeHttp(`${hubUrl}/readyz`),
      probeHttp(`${hubUrl}/openapi.json`, { timeoutMs: 10_000 }),
    ]);
    hubVersion = (openapi.body as { info?: { version?: unknown } } | null)?.info?.version?.toString() ?? null;
    skew = skewFromDateHeader(ready.date, ready.sentAt, ready.receivedAt);
    if (ready.status === 200) {
      checks.push(pass('hub_reachable', `${hubUrl} is ready (hub API ${hubVersion ?? 'version unknown'})`));
    } else {
      checks.push(
        fail(
          'hub_reachable',
          `hub ${unreachable(ready)}`,
          'check --hub-url and the network; svc login again if the hub moved',
        ),
      );
    }

    const participant = profile.participant;
    if (!participant) {
      checks.push(fail('participant_credential', 'no participant token in the profile', LOGIN_FIX));
    } else {
      const hub = createHubClient({
        baseUrl: hubUrl,
        token: participant.token,
        clientName: input.clientName,
      });
      const me = await hubGet(() => hub.GET('/api/v1/me'));
      if (me.status === 200) checks.push(participantExpiryCheck(participant.expires_at, now));
      else if (me.status === 401)
        checks.push(fail('participant_credential', 'the hub refused the participant token', LOGIN_FIX));
      else
        checks.push(
          fail('participant_credential', `GET /api/v1/me: ${me.error ?? `HTTP ${me.status}`}`, LOGIN_FIX),
        );
    }
  }

  checks.push(
    runtimeConfigFreshnessCheck(
      runtime?.pulled_at,
      {
        relayToken: Boolean(secrets.SVC_RELAY_TOKEN),
        workspaceApiKey: Boolean(apiKey),
      },
      now,
    ),
  );

  if (!hubUrl || !runtime) {
    checks.push(fail('runtime_key', 'no runtime config to check the key against', 'svc config pull-runtime'));
  } else if (!apiKey) {
    checks.push(
      fail('runtime_key', 'no workspace API key (SVC_WORKSPACE_API_KEY)', 'svc config pull-runtime'),
    );
  } else {
    const hub = createHubClient({ baseUrl: hubUrl, apiKey, clientName: input.clientName });
    const got = await hubGet(() =>
      hub.GET('/api/v1/runtime-hosts/{hostId}', {
        params: { path: { hostId: runtime.runtime_instance_id } },
      }),
    );
    host = got.data;
    if (got.status === 200)
      checks.push(runtimeKeyCheck(runtime.runtime_instance_id, got.data?.readiness.runtime_key));
    else if (got.status === 401)
      checks.push(
        fail(
          'runtime_key',
          'the hub refused the runtime key (revoked or rotated)',
          'svc config pull-runtime',
        ),
      );
    else if (got.status === 404)
      checks.push(
        fail(
          'runtime_key',
          `the hub knows no host ${runtime.runtime_instance_id} in this workspace`,
          'svc config pull-runtime',
        ),
      );
    else
      checks.push(
        fail(
          'runtime_key',
          `GET runtime host: ${got.error ?? `HTTP ${got.status}`}`,
          'svc config pull-runtime',
        ),
      );
  }

  checks.push(runtimeInstanceIdCheck(env.SVC_RUNTIME_INSTANCE_ID, runtime?.runtime_instance_id));
  checks.push(
    workdirRootCheck(env.SVC_AGENT_WORKDIR_ROOT, host?.workdir_root ?? runtime?.agent_workdir_root),
  );

  if (relayProbe && routerProbe) {
    checks.push(readinessCheck('relay_ready', 'relay', await relayProbe));
    checks.push(readinessCheck('console_router_ready', 'console router', await routerProbe));
  } else {
    checks.push(
      fail('relay_ready', 'no runtime config: the relay address is unknown', 'svc config pull-runtime'),
    );
    checks.push(
      fail(
        'console_router_ready',
        'no runtime config: the console router address is unknown',
        'svc config pull-runtime',
      ),
    );
  }

  if (host) checks.push(heartbeatCheck(host.last_heartbeat_at, now));
  else
    checks.push(
      fail(
        'heartbeat_fresh',
        'the host could not be read from the hub',
        'fix runtime_key first (svc config pull-runtime)',
      ),
    );

  const connectorCheck = tunnelConnectorCheck(runtime?.tunnel?.provider, await resolveCloudflared(env));
  if (connectorCheck) checks.push(connectorCheck);
  checks.push(modes);
  checks.push(
    skew === null
      ? fail('clock_skew', 'the hub sent no usable Date header', 'fix hub_reachable first')
      : clockSkewCheck(skew),
  );

  return {
    profile: store.paths.profile,
    hub_url: hubUrl ?? null,
    workspace: workspace ?? null,
    hub_version: hubVersion,
    checks,
    summary: summarizeChecks(checks),
  };
}
