import { unwrap } from '@svc/contracts';
import { APP_DIRS } from './platform';
import type { HubOwner } from './platform';
import { eventually, startBuiltEntryPoint } from './process';
import type { NodeProcess, StartOptions } from './process';

/** A strict artifact schema for a small report (title, summary, scored items), as runs publish it. */
export const REPORT_SCHEMA = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  type: 'object',
  required: ['title', 'summary', 'items'],
  additionalProperties: false,
  properties: {
    title: { type: 'string', minLength: 1, maxLength: 200 },
    summary: { type: 'string', minLength: 1 },
    items: {
      type: 'array',
      minItems: 1,
      items: {
        type: 'object',
        required: ['name', 'score'],
        additionalProperties: false,
        properties: { name: { type: 'string' }, score: { type: 'integer', minimum: 0, maximum: 100 } },
      },
    },
  },
};

export interface LiveRuntimeHost {
  id: string;
  /** Stops the heartbeat. */
  stop(): void;
}

/**
 * Registers a runtime host in the owner's workspace and keeps it heartbeating (relay and console router
 * ready) every 20 s with a `runtime-hosts:write` key, as a live host does.
 */
export async function registerLiveRuntimeHost(owner: HubOwner, name: string): Promise<LiveRuntimeHost> {
  const registered = unwrap(
    await owner.hub.POST('/api/v1/workspaces/{workspace}/runtime-hosts', {
      params: { path: { workspace: owner.workspace.slug } },
      body: {
        name,
        hostname: 'runtime-1.internal',
        workdir_root: '/srv/agents',
        console_public_base_url: 'https://console.example.test',
        relay_public_url: 'https://relay.example.test',
      } as never,
    }),
  );
  const id = registered.host.id;
  const hostKey = await owner.createApiKey(['runtime-hosts:write'], `${name} heartbeat`);
  const beat = async () => {
    const res = await fetch(`${owner.hubUrl}/api/v1/runtime-hosts/${id}/heartbeat`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': hostKey },
      body: JSON.stringify({ relay_ready: true, console_router_ready: true, runtime_version: '1.0.0' }),
    });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`host heartbeat: HTTP ${res.status}`);
  };
  await beat();
  const timer = setInterval(() => void beat().catch(() => undefined), 20_000);
  timer.unref();
  return { id, stop: () => clearInterval(timer) };
}

/** Registers an agent of the project on the host (model `local/echo`) and starts it at the hub. */
export async function registerStartedAgent(
  owner: HubOwner,
  agent: { name: string; hostId: string; projectCode: string; capabilities: string[] },
): Promise<{ id: string; token: string }> {
  const registered = unwrap(
    await owner.hub.POST('/api/v1/workspaces/{workspace}/agents', {
      params: { path: { workspace: owner.workspace.slug } },
      body: {
        name: agent.name,
        runtime_instance_id: agent.hostId,
        capabilities: agent.capabilities,
        project_code: agent.projectCode,
        model: 'local/echo',
      } as never,
    }),
  ) as { id?: string; agent?: { id: string } };
  const id = (registered.agent?.id ?? registered.id) as string;
  const started = unwrap(
    await owner.hub.POST('/api/v1/agents/{agentId}/start', {
      params: { path: { agentId: id } },
      body: { launch_path: 'direct' },
    }),
  );
  return { id, token: started.agent_token };
}

/**
 * Runs the built reference agent (`apps/reference-agent/dist/main.js`) for a started agent and waits until the
 * hub has seen its first heartbeat; a process that exits or stays silent for 20 s is stopped and reported with
 * its output.
 */
export async function startReferenceAgent(
  owner: HubOwner,
  agent: { id: string; token: string },
  options: { workflowUrl: string; env?: Record<string, string>; process?: StartOptions },
): Promise<NodeProcess> {
  const proc = startBuiltEntryPoint(
    APP_DIRS.referenceAgent,
    'dist/main.js',
    { AGENT_TOKEN: agent.token, HUB_URL: owner.hubUrl, WORKFLOW_URL: options.workflowUrl, ...options.env },
    { name: `reference agent ${agent.id}`, ...options.process },
  );
  const heard = await eventually(
    async () => {
      if (!proc.running()) return 'exited';
      const res = await owner.hub.GET('/api/v1/agents/{agentId}', {
        params: { path: { agentId: agent.id } },
      });
      const seen = (res.data?.data as { last_heartbeat_at?: string | null } | undefined)?.last_heartbeat_at;
      return seen !== undefined && seen !== null && Date.parse(seen) > Date.now() - 10_000 && 'heartbeat';
    },
    20_000,
    `a heartbeat of ${proc.name}`,
  ).catch(() => 'silent');
  if (heard === 'heartbeat') return proc;
  await proc.stop('SIGKILL');
  throw new Error(`${proc.name} sent no heartbeat within 20 s:\n${proc.output()}`);
}
