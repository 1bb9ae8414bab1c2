import type { HubApi } from '@svc/contracts';

type KeyStatus = HubApi.components['schemas']['RuntimeHostKeyStatus'];

const PULL_HERE =
  'pull the runtime config on this host (svc config pull-runtime); svc runtime up switches to the new key by itself';

/**
 * The one line the runtime logs about its key, from a heartbeat's answer (`status`) or a refusal (`httpStatus`
 * 401): null while the key is the host's current one. The same line is not logged twice in a row.
 */
export function runtimeKeyNotice(
  status: KeyStatus | undefined,
  httpStatus: number | null = null,
): string | null {
  if (httpStatus === 401) {
    return `runtime key: the hub refuses this host's runtime key (revoked, or its overlap window ended), so the host is offline; ${PULL_HERE}`;
  }
  if (!status) return null;
  const by = status.rotated_by ? ` by ${status.rotated_by}` : '';
  if (status.state === 'superseded') {
    return `runtime key: superseded at ${status.rotated_at ?? 'an unknown time'}${by}; it stays valid until ${status.valid_until ?? 'unknown'}: ${PULL_HERE}`;
  }
  if (status.state === 'revoked') {
    return `runtime key: revoked at ${status.valid_until ?? 'an unknown time'}${by}; ${PULL_HERE}`;
  }
  return null;
}
