import { createHmac } from 'node:crypto';

/** Shortest host console secret accepted: the per-agent keys are only as strong as it is. */
export const CONSOLE_SECRET_MIN_LENGTH = 32;

/**
 * The key a runtime host's console router proves itself with to one agent's console
 * (`x-svc-console-proxy-key`): base64url of HMAC-SHA256 over the agent id, keyed with the host's console
 * secret. The router derives it per request; `svc start` derives the same value for the agent's
 * `AGENT_CONSOLE_PROXY_KEY`. Each agent holds only its own key, so no agent can speak for the router to
 * another agent, and the secret never leaves the host's router and CLI.
 */
export function deriveConsoleProxyKey(secret: string, agentId: string): string {
  if (typeof secret !== 'string' || secret.length < CONSOLE_SECRET_MIN_LENGTH) {
    throw new RangeError(`the console secret must be at least ${CONSOLE_SECRET_MIN_LENGTH} characters`);
  }
  if (typeof agentId !== 'string' || agentId === '')
    throw new TypeError('agentId must be a non-empty string');
  return createHmac('sha256', secret).update(`svc-console-proxy-key:${agentId}`, 'utf8').digest('base64url');
}
