import type { AgentTokenInfo } from '../use-cases/tokens/describe-agent-token';
import type { AgentTokenHealthResult } from '../use-cases/tokens/check-agent-token-health';
import type { AgentTokenRefreshResult } from '../use-cases/tokens/refresh-agent-token';

/** Human lines of `svc token …`: facts about tokens, never a token. */
export function presentTokenInfo(info: AgentTokenInfo): string[] {
  const t = info.token;
  const audience = Array.isArray(t.audience) ? t.audience.join(' ') : (t.audience ?? '-');
  const lines = [
    `agent        ${info.name} (${info.agent_id})`,
    `subject      ${t.subject ?? '-'}`,
    `audience     ${audience}`,
    `issued at    ${t.issued_at ?? '-'}`,
    `expires at   ${t.expires_at ?? '-'}${t.expired ? ' (expired)' : t.expires_in_seconds !== null ? ` (in ${t.expires_in_seconds} s)` : ''}`,
    `scopes       ${t.scopes ? t.scopes.join(' ') : 'decided by the hub per request (not in the token)'}`,
  ];
  for (const [key, value] of Object.entries(t.claims)) lines.push(`${key.padEnd(12)} ${String(value)}`);
  if (info.runtime_credential) {
    const rc = info.runtime_credential;
    lines.push(
      `runtime credential  ${rc.provider} ${rc.model} via ${rc.authorization_source}, ` +
        `${rc.expired ? 'expired' : 'expires'} ${rc.expires_at}`,
    );
  }
  return lines;
}

export function presentTokenRefresh(r: AgentTokenRefreshResult): string[] {
  return [`Refreshed the AGENT_TOKEN of ${r.name}: it now expires at ${r.expires_at}.`, `  ${r.note}`];
}

export function presentTokenHealth(r: AgentTokenHealthResult): string[] {
  if (r.health === 'valid') {
    return [
      `${r.name}: valid (the hub accepts the token; agent ${r.agent_status}; expires ${r.expires_at ?? '-'})`,
    ];
  }
  return [];
}
