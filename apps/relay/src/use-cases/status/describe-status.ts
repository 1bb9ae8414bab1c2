import os from 'node:os';
import type { RelayApi } from '@svc/contracts';

export type RelayStatus = RelayApi.components['schemas']['RelayStatus'];

export interface StatusFacts {
  /** Bind host and the port actually bound. */
  host: string;
  port: number;
  runtimeVersion: string;
  startedAt: Date;
  now: Date;
  ready: boolean;
  workspace: string | undefined;
  runtimeInstanceId: string | undefined;
  spawnEnabled: boolean;
  spawns: RelayStatus['spawns'];
}

/** Process facts of this relay, as `GET /status` reports them. */
export function describeStatus(facts: StatusFacts): RelayStatus {
  return {
    pid: process.pid,
    host: facts.host,
    port: facts.port,
    hostname: os.hostname(),
    runtime_version: facts.runtimeVersion,
    node_version: process.versions.node,
    started_at: facts.startedAt.toISOString(),
    uptime_seconds: Math.max(0, Math.round((facts.now.getTime() - facts.startedAt.getTime()) / 1000)),
    ready: facts.ready,
    workspace: facts.workspace ?? null,
    runtime_instance_id: facts.runtimeInstanceId ?? null,
    spawn_enabled: facts.spawnEnabled,
    spawns: facts.spawns,
  };
}
