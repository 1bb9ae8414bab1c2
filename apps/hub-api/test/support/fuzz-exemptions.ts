import type { FuzzExemption } from '@svc/testing';

/**
 * Checks of the hub's fuzz suite that do not hold for an operation, each with its reason. An entry exempts
 * only answers matching its operation, check and (when given) phase, status and code.
 */
export const HUB_FUZZ_EXEMPTIONS: readonly FuzzExemption[] = [
  {
    operationId: 'provisionRuntimeEnvironmentTunnel',
    check: 'no_5xx',
    status: 503,
    code: 'tunnel_provider_not_configured',
    reason:
      'The hub under test has no Cloudflare credentials, so a cloudflare tunnel is refused with the documented 503 (a deployment state, not a fault); the tunnel tests cover the configured provider.',
  },
  {
    operationId: 'deleteRuntimeEnvironmentTunnel',
    check: 'no_5xx',
    status: 503,
    code: 'tunnel_provider_not_configured',
    reason:
      'The hub under test has no Cloudflare credentials, so deleting a cloudflare tunnel is refused with the documented 503 (a deployment state, not a fault).',
  },
];
