import type { RuntimeHost } from '../generated/prisma/client';
import { HOST_HEARTBEAT_FRESH_SECONDS } from './host-readiness';
import type { HostReadiness, ReadinessFacts } from './host-readiness';

/** What readiness needs of a host: who it is and the facts of its latest heartbeat. */
export type ReadinessHost = Pick<RuntimeHost, 'id' | 'name' | 'hostname'> & ReadinessFacts;

export type ReadinessBlockerCode =
  'no_runtime_host' | 'runtime_host_stale' | 'relay_not_ready' | 'console_router_not_ready';

export interface ReadinessBlocker {
  code: ReadinessBlockerCode;
  message: string;
  recommended_action: string;
  runtime_instance_ids: string[];
}

export interface HostReadinessReport {
  host: ReadinessHost;
  readiness: HostReadiness;
  /** Fresh heartbeat, relay ready and console router ready. */
  ready: boolean;
  runningAgents: number;
  rosterAgents: number;
}

const hostList = (hosts: HostReadinessReport[]) =>
  hosts.map((h) => `${h.host.name} (${h.host.id})`).join(', ');

/** One blocker per code, naming every host it concerns; in the order a fix has to follow. */
export function readinessBlockers(
  scope: 'roster' | 'workspace',
  hosts: HostReadinessReport[],
): ReadinessBlocker[] {
  if (hosts.length === 0) {
    return [
      {
        code: 'no_runtime_host',
        message:
          scope === 'workspace'
            ? 'The workspace has no runtime host, so nothing can run the agents of the project.'
            : 'None of the agents of the project is attributed to a runtime host.',
        recommended_action:
          'Register a runtime host in the workspace and start it with `svc runtime up` under a service manager, then run preflight again.',
        runtime_instance_ids: [],
      },
    ];
  }
  const stale = hosts.filter((h) => !h.readiness.heartbeat_fresh);
  // A stale host's relay and console flags are old news: only a fresh host is judged on them.
  const fresh = hosts.filter((h) => h.readiness.heartbeat_fresh);
  const relay = fresh.filter((h) => !h.readiness.relay_ready);
  const consoleRouter = fresh.filter((h) => !h.readiness.console_router_ready);
  const blockers: ReadinessBlocker[] = [];
  if (stale.length > 0) {
    blockers.push({
      code: 'runtime_host_stale',
      message: `No heartbeat for more than ${HOST_HEARTBEAT_FRESH_SECONDS} s from ${hostList(stale)}.`,
      recommended_action:
        'Check that `svc runtime up` is running on the host (under its service manager, with automatic restart) and can reach the hub; `svc runtime status` shows its state.',
      runtime_instance_ids: stale.map((h) => h.host.id),
    });
  }
  if (relay.length > 0) {
    blockers.push({
      code: 'relay_not_ready',
      message: `The relay is not ready on ${hostList(relay)}.`,
      recommended_action:
        'Run `svc internal relay health` on the host; make sure the hub URL, workspace, API key and SVC_RELAY_TOKEN are configured (`svc config doctor`), then `svc internal relay start --daemon`.',
      runtime_instance_ids: relay.map((h) => h.host.id),
    });
  }
  if (consoleRouter.length > 0) {
    blockers.push({
      code: 'console_router_not_ready',
      message: `The console router is not ready on ${hostList(consoleRouter)}.`,
      recommended_action:
        'Check `/readyz` of the console router on the host and the runtime config (`svc config pull-runtime`), then restart the runtime with `svc runtime up`.',
      runtime_instance_ids: consoleRouter.map((h) => h.host.id),
    });
  }
  return blockers;
}
