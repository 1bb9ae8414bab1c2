import type { RelayApi } from '@svc/contracts';
import { livenessHandler, readinessHandler } from '@svc/service-kit';
import type { OperationHandlers, ReadinessCheck } from '@svc/service-kit';

type HealthHandlers = Pick<OperationHandlers<RelayApi.operations>, 'relayLiveness' | 'relayReadiness'>;

/** `GET /healthz` (the process is up) and `GET /readyz` (every readiness check passes, else 503). */
export function healthRoutes(deps: {
  checks: Record<string, ReadinessCheck>;
  timeoutMs: number;
}): HealthHandlers {
  return {
    relayLiveness: livenessHandler(),
    relayReadiness: readinessHandler(deps.checks, deps.timeoutMs),
  };
}
