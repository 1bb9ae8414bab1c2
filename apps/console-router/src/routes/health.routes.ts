import type { ConsoleRouterApi } from '@svc/contracts';
import { livenessHandler, readinessHandler } from '@svc/service-kit/http';
import type { OperationHandlers, ReadinessCheck } from '@svc/service-kit/http';

type HealthHandlers = Pick<
  OperationHandlers<ConsoleRouterApi.operations>,
  'consoleRouterLiveness' | 'consoleRouterReadiness'
>;

/** `GET /healthz` (the process is up) and `GET /readyz` (every readiness check passes, else 503). */
export function healthRoutes(deps: {
  checks: Record<string, ReadinessCheck>;
  timeoutMs: number;
}): HealthHandlers {
  return {
    consoleRouterLiveness: livenessHandler(),
    consoleRouterReadiness: readinessHandler(deps.checks, deps.timeoutMs),
  };
}
