import { flattenForDisplay } from '../domain/secret-presence';
import type { LoginResult } from '../use-cases/auth/login-participant';
import type { PullRuntimeResult } from '../use-cases/config/pull-runtime-config';
import type { ResetResult } from '../use-cases/config/reset-config';
import type { ProfileSummary } from '../use-cases/config/summarize-profile';

/** Human lines of the accounts and configuration commands. Never a secret: results carry none. */
export function presentPulledRuntime(r: PullRuntimeResult): string[] {
  return [
    `Pulled the runtime config of ${r.runtime_instance_id} (workspace ${r.workspace}) at ${r.pulled_at}.`,
    `  console router  ${r.console_router.local_url} (public ${r.console_router.public_base_url})`,
    `  relay           ${r.relay.local_url}${r.relay.public_url ? ` (public ${r.relay.public_url})` : ''}`,
    `  workdir root    ${r.agent_workdir_root}`,
    `  secrets         ${r.stored_secrets.join(', ')} in ${r.runtime_env_path} (0600)`,
    r.runtime_key.rotated
      ? `  runtime key     new key ${r.runtime_key.prefix ?? '?'}; the previous one ${r.runtime_key.previous_valid_until ? `stays valid until ${r.runtime_key.previous_valid_until}` : 'is revoked'}`
      : `  runtime key     kept ${r.runtime_key.prefix ?? '?'} (the host's current key)`,
  ];
}

export function presentLogin(r: LoginResult): string[] {
  return [
    `Logged in to ${r.hub_url} as ${r.participant.email} (workspace ${r.workspace}); ` +
      `the token expires at ${r.participant.expires_at}.`,
    ...(r.runtime ? presentPulledRuntime(r.runtime) : []),
  ];
}

export function presentProfile(s: ProfileSummary): string[] {
  if (!s.logged_in) return [`Profile "${s.profile}" is not logged in (svc login).`];
  const lines = [
    `profile       ${s.profile}`,
    `hub           ${s.hub_url}`,
    `workspace     ${s.workspace}`,
    `participant   ${s.participant!.email} (token ${s.participant!.expired ? 'expired' : 'expires'} ${s.participant!.expires_at})`,
  ];
  if (s.runtime) {
    lines.push(
      `runtime host  ${s.runtime.runtime_instance_id} (pulled ${s.runtime.pulled_at})`,
      `  console     ${s.runtime.console_router_url} (public ${s.runtime.console_public_base_url})`,
      `  relay       ${s.runtime.relay_url}`,
    );
  } else {
    lines.push('runtime host  not pulled (svc config pull-runtime)');
  }
  return lines;
}

/** `key  value` lines of a (masked or redacted) config document. */
export function presentConfigDocument(document: unknown): string[] {
  const rows = flattenForDisplay(document);
  const width = Math.min(60, Math.max(0, ...rows.map(([key]) => key.length)));
  return rows.map(([key, value]) => `${key.padEnd(width)}  ${value}`);
}

export function presentReset(r: ResetResult): string[] {
  const what = r.scope === 'runtime' ? 'the runtime config' : 'the profile';
  if (r.removed.length === 0) return [`Reset ${what} of "${r.profile}" (nothing was stored).`];
  return [`Reset ${what} of "${r.profile}"; removed ${r.removed.join(', ')}.`];
}
