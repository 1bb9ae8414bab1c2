import { randomUUID } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
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

async function registerHost(owner: HubOwner, name: string): Promise<{ id: string; hostKey: string }> {
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
  return { id, hostKey };
}

/** A runtime host's heartbeat as `svc runtime up` sends it: relay and console router ready. */
const HEARTBEAT_BODY = { relay_ready: true, console_router_ready: true, runtime_version: '1.0.0' };

/**
 * Registers a runtime host in the owner's workspace and keeps it heartbeating (relay and console router
 * ready) every 10 s, as `svc runtime up` does, with a `runtime-hosts:write` key. The heartbeat runs in a small
 * process of its own: a test that blocks its own event loop for a while (a synchronous `tsc` or `npm install`)
 * must not make the hub take the host, and its agents, for lost.
 */
export async function registerLiveRuntimeHost(owner: HubOwner, name: string): Promise<LiveRuntimeHost> {
  const host = await startRuntimeHostProcess(owner, name);
  return {
    id: host.id,
    stop: () => {
      if (host.process.running()) host.process.child.kill('SIGTERM');
    },
  };
}

export interface RuntimeHostProcess {
  id: string;
  name: string;
  /** The process that heartbeats for the host: kill it (SIGKILL) and the host goes silent, as a dead machine. */
  process: NodeProcess;
}

/**
 * Registers a runtime host and runs its heartbeat in a process of its own (every `intervalMs`, 10 s as `svc
 * runtime up` by default), so a test can kill the host like a machine that dies; resolves once the hub has its
 * first heartbeat.
 */
export async function startRuntimeHostProcess(
  owner: HubOwner,
  name: string,
  options: { intervalMs?: number } = {},
): Promise<RuntimeHostProcess> {
  const { id, hostKey } = await registerHost(owner, name);
  const script = path.join(os.tmpdir(), `svc-host-heartbeat-${randomUUID()}.cjs`);
  writeFileSync(
    script,
    `const url = process.env.HOST_HEARTBEAT_URL, key = process.env.HOST_KEY, body = process.env.HOST_BODY;
     const beat = () => fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key }, body })
       .then((res) => res.arrayBuffer()).catch(() => undefined);
     void beat();
     setInterval(beat, Number(process.env.HOST_INTERVAL_MS));`,
  );
  const proc = startBuiltEntryPoint(
    os.tmpdir(),
    path.basename(script),
    {
      HOST_HEARTBEAT_URL: `${owner.hubUrl}/api/v1/runtime-hosts/${id}/heartbeat`,
      HOST_KEY: hostKey,
      HOST_BODY: JSON.stringify(HEARTBEAT_BODY),
      HOST_INTERVAL_MS: String(options.intervalMs ?? 10_000),
    },
    { name: `runtime host ${name}` },
  );
  await eventually(
    async () => {
      const res = await owner.hub.GET('/api/v1/runtime-hosts/{hostId}', { params: { path: { hostId: id } } });
      return res.data?.data.last_heartbeat_at ?? null;
    },
    20_000,
    `the first heartbeat of runtime host ${name}`,
  );
  return { id, name, process: proc };
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
