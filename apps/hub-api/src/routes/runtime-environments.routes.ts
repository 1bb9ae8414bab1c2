import { workspaceOf } from '../auth/workspace-guard';
import type { HubDeps } from '../deps';
import { presentRuntimeEnvironment } from '../presenters/runtime-environments';
import { deleteRuntimeEnvironmentTunnel } from '../use-cases/runtime-environments/delete-runtime-environment-tunnel';
import { getTunnelConnector } from '../use-cases/runtime-environments/get-tunnel-connector';
import { listRuntimeEnvironments } from '../use-cases/runtime-environments/list-runtime-environments';
import { provisionRuntimeEnvironmentTunnel } from '../use-cases/runtime-environments/provision-runtime-environment-tunnel';
import { readRuntimeEnvironmentTunnel } from '../use-cases/runtime-environments/read-runtime-environment-tunnel';
import type { HubHandlers } from './types';
import { actorOf } from './types';

export function runtimeEnvironmentHandlers(
  deps: HubDeps,
): HubHandlers<
  | 'listRuntimeEnvironments'
  | 'getRuntimeEnvironmentTunnel'
  | 'provisionRuntimeEnvironmentTunnel'
  | 'deleteRuntimeEnvironmentTunnel'
  | 'getTunnelConnector'
> {
  return {
    async listRuntimeEnvironments(ctx) {
      const environments = await listRuntimeEnvironments(deps, workspaceOf(ctx).id);
      return { status: 200, body: { data: environments.map((env) => presentRuntimeEnvironment(env)) } };
    },
    async getRuntimeEnvironmentTunnel(ctx) {
      const { environment, live } = await readRuntimeEnvironmentTunnel(
        deps,
        workspaceOf(ctx).id,
        ctx.params.environment,
      );
      return { status: 200, body: { data: presentRuntimeEnvironment(environment, live) } };
    },
    async provisionRuntimeEnvironmentTunnel(ctx) {
      const body = ctx.body ?? {};
      const { environment, live } = await provisionRuntimeEnvironmentTunnel(
        deps,
        actorOf(ctx.actor),
        workspaceOf(ctx),
        ctx.params.environment,
        { provider: body.provider, runtimeInstanceIds: body.runtime_instance_ids, requestId: ctx.requestId },
      );
      return { status: 200, body: { data: presentRuntimeEnvironment(environment, live) } };
    },
    async deleteRuntimeEnvironmentTunnel(ctx) {
      const environment = await deleteRuntimeEnvironmentTunnel(
        deps,
        actorOf(ctx.actor),
        workspaceOf(ctx),
        ctx.params.environment,
        ctx.requestId,
      );
      return { status: 200, body: { data: presentRuntimeEnvironment(environment) } };
    },
    async getTunnelConnector(ctx) {
      const settings = await getTunnelConnector(deps, actorOf(ctx.actor), ctx.params.hostId, ctx.requestId);
      return {
        status: 200,
        body: {
          data: {
            runtime_instance_id: settings.runtimeInstanceId,
            runtime_environment: settings.environmentName,
            connector: settings.connector && {
              provider: settings.connector.provider,
              tunnel_id: settings.connector.tunnelId,
              token: settings.connector.token,
            },
          },
        },
        headers: { 'Cache-Control': 'no-store' },
      };
    },
  };
}
