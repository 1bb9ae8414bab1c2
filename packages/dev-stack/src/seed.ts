import os from 'node:os';
import { WORKFLOW_SCOPES } from '@svc/auth';
import { createHubClient, createHubInternalClient, unwrap } from '@svc/contracts';
import type { DevStackFile } from './state';

type KeyKind = keyof DevStackFile['api_keys'];

/** What each development key may do. */
const KEY_REQUESTS: Record<
  KeyKind,
  { preset?: 'read-only' | 'automation' | 'agent-runtime'; scopes?: string[] }
> = {
  read_only: { preset: 'read-only' },
  automation: { preset: 'automation' },
  agent_runtime: { preset: 'agent-runtime' },
  // Every workflow scope, including artifact-schemas:write and workflow-delivery:manage — and nothing else.
  workflow_all: { scopes: [...WORKFLOW_SCOPES] },
};

export interface SeedInput {
  hubUrl: string;
  workspace: { id: string; slug: string };
  email: string;
  password: string;
  projectCode: string;
  serviceToken: string;
  /** Keys from an earlier run; each is reused when it still works. */
  previousKeys?: Partial<DevStackFile['api_keys']>;
  /** The development runtime host, registered once (found again by name on later runs). */
  runtimeHost: {
    workdirRoot: string;
    consolePublicBaseUrl: string;
    relayPublicUrl: string;
    /** Where `svc runtime up` runs the relay and the console router (the hub hands these out). */
    relayPort: number;
    consoleRouterPort: number;
  };
}

/** Name of the development workspace's runtime host (this machine). */
export const DEV_RUNTIME_HOST_NAME = 'dev-stack-host';

/**
 * Seeds the development workspace through the public hub API, idempotently: the project is created once,
 * and API keys from an earlier run are kept while the hub still accepts them.
 */
export async function seedWorkspace(input: SeedInput) {
  const anonymous = createHubClient({ baseUrl: input.hubUrl, clientName: 'dev-stack' });
  const session = unwrap(
    await anonymous.POST('/api/v1/auth/login', { body: { email: input.email, password: input.password } }),
  );
  const hub = createHubClient({ baseUrl: input.hubUrl, token: session.token, clientName: 'dev-stack' });
  const workspace = { path: { workspace: input.workspace.slug } };

  const projects = unwrap(await hub.GET('/api/v1/workspaces/{workspace}/projects', { params: workspace }));
  const project =
    projects.find((p) => p.code === input.projectCode) ??
    unwrap(
      await hub.POST('/api/v1/workspaces/{workspace}/projects', {
        params: workspace,
        body: { code: input.projectCode, name: 'Development project' },
      }),
    );

  const keys = {} as DevStackFile['api_keys'];
  for (const kind of Object.keys(KEY_REQUESTS) as KeyKind[]) {
    const previous = input.previousKeys?.[kind];
    if (previous && (await keyStillWorks(input, previous))) {
      keys[kind] = previous;
      continue;
    }
    const created = unwrap(
      await hub.POST('/api/v1/workspaces/{workspace}/api-keys', {
        params: workspace,
        body: { name: `dev-stack ${kind.replace('_', '-')}`, ...KEY_REQUESTS[kind] },
      }),
    );
    keys[kind] = created.key;
  }

  // This machine as the workspace's runtime host: `svc runtime up` runs its relay and console router on the
  // listen ports the hub holds for it, so they are the development ports.
  const hosts = unwrap(await hub.GET('/api/v1/workspaces/{workspace}/runtime-hosts', { params: workspace }));
  const wanted = { relay: input.runtimeHost.relayPort, console: input.runtimeHost.consoleRouterPort };
  const existing = hosts.find((h) => h.name === DEV_RUNTIME_HOST_NAME);
  if (
    existing &&
    (existing.relay.listen_port !== wanted.relay || existing.console_router.listen_port !== wanted.console)
  ) {
    throw new Error(
      `the development runtime host ${existing.id} was registered with relay port ${existing.relay.listen_port} and console router port ${existing.console_router.listen_port}; start with RELAY_PORT=${existing.relay.listen_port} CONSOLE_ROUTER_PORT=${existing.console_router.listen_port}, or use fresh databases`,
    );
  }
  const host =
    existing ??
    unwrap(
      await hub.POST('/api/v1/workspaces/{workspace}/runtime-hosts', {
        params: workspace,
        body: {
          name: DEV_RUNTIME_HOST_NAME,
          hostname: os.hostname().slice(0, 253) || 'localhost',
          workdir_root: input.runtimeHost.workdirRoot,
          console_public_base_url: input.runtimeHost.consolePublicBaseUrl,
          relay_public_url: input.runtimeHost.relayPublicUrl,
          relay: { bind_host: '127.0.0.1', listen_port: wanted.relay },
          console_router: { bind_host: '127.0.0.1', listen_port: wanted.console },
        },
      }),
    ).host;
  return {
    token: session.token,
    project: { id: project.id, code: project.code },
    keys,
    runtimeHost: { id: host.id },
  };
}

/** A key still works when the hub's introspection calls it active and it belongs to this workspace. */
async function keyStillWorks(input: SeedInput, key: string): Promise<boolean> {
  const internal = createHubInternalClient({
    baseUrl: input.hubUrl,
    serviceToken: input.serviceToken,
    clientName: 'dev-stack',
  });
  const answer = unwrap(await internal.POST('/internal/v1/api-keys/introspect', { body: { key } }));
  return answer.active && answer.workspace_id === input.workspace.id;
}

/**
 * Marks the development agent stopped at the hub as the workspace's participant (a fresh sign-in): the stop
 * path when `svc stop` could not, e.g. because the host's runtime key was revoked or superseded by another
 * pull. Resolves with the agent's status afterwards, or `absent` when no agent has that name.
 */
export async function stopAgentAsParticipant(input: {
  hubUrl: string;
  workspace: string;
  email: string;
  password: string;
  agentName: string;
}): Promise<string> {
  const anonymous = createHubClient({ baseUrl: input.hubUrl, clientName: 'dev-stack' });
  const session = unwrap(
    await anonymous.POST('/api/v1/auth/login', { body: { email: input.email, password: input.password } }),
  );
  const hub = createHubClient({ baseUrl: input.hubUrl, token: session.token, clientName: 'dev-stack' });
  const agents = unwrap(
    await hub.GET('/api/v1/workspaces/{workspace}/agents', {
      params: { path: { workspace: input.workspace } },
    }),
  );
  const agent = agents.find((a) => a.name === input.agentName);
  if (!agent) return 'absent';
  if (agent.status === 'offline' || agent.status === 'evicted') return agent.status;
  return unwrap(await hub.POST('/api/v1/agents/{agentId}/stop', { params: { path: { agentId: agent.id } } }))
    .status;
}
