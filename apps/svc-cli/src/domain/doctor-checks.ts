/**
 * The rules of `svc config doctor`: each check's verdict (pass / warn / fail) and its one-line fix, from facts
 * the use case gathered. Pure: no network, no files.
 */
export type CheckStatus = 'pass' | 'warn' | 'fail';

export interface DoctorCheck {
  /** Stable id scripts can branch on. */
  id: string;
  status: CheckStatus;
  /** One line: what was found. */
  detail: string;
  /** One line: what to do about it (null when the check passed). */
  fix: string | null;
}

export const DOCTOR_LIMITS = {
  /** A runtime host's heartbeat is fresh for this long (the hub's spawn readiness uses the same bound). */
  heartbeatFreshMs: 45_000,
  /** A pulled runtime config older than this gets a warning. */
  runtimeConfigStaleMs: 24 * 3600_000,
  /** Clock skew against the hub: warn above, fail above. */
  clockSkewWarnMs: 5_000,
  clockSkewFailMs: 60_000,
  /** A participant token with less than this left is "near expiry". */
  participantNearExpiryMs: 10 * 60_000,
} as const;

export const pass = (id: string, detail: string): DoctorCheck => ({ id, status: 'pass', detail, fix: null });
export const warn = (id: string, detail: string, fix: string): DoctorCheck => ({
  id,
  status: 'warn',
  detail,
  fix,
});
export const fail = (id: string, detail: string, fix: string): DoctorCheck => ({
  id,
  status: 'fail',
  detail,
  fix,
});

function ageText(ms: number): string {
  const s = Math.round(ms / 1000);
  if (s < 120) return `${s} s`;
  if (s < 7200) return `${Math.round(s / 60)} min`;
  return `${Math.round(s / 3600)} h`;
}

export function participantExpiryCheck(expiresAt: string, now: number): DoctorCheck {
  const left = Date.parse(expiresAt) - now;
  const fix = 'svc login --hub-url <url> --workspace <workspace>';
  if (!(left > 0))
    return fail('participant_credential', `the participant token expired at ${expiresAt}`, fix);
  if (left < DOCTOR_LIMITS.participantNearExpiryMs) {
    return warn('participant_credential', `the participant token expires in ${ageText(left)}`, fix);
  }
  return pass(
    'participant_credential',
    `the hub accepts the participant token (expires in ${ageText(left)})`,
  );
}

export function runtimeConfigFreshnessCheck(
  pulledAt: string | undefined,
  secrets: { relayToken: boolean; workspaceApiKey: boolean },
  now: number,
): DoctorCheck {
  const fix = 'svc config pull-runtime';
  if (!pulledAt) return fail('runtime_config', 'no runtime config has been pulled for this profile', fix);
  const missing = [
    ...(secrets.relayToken ? [] : ['SVC_RELAY_TOKEN']),
    ...(secrets.workspaceApiKey ? [] : ['SVC_WORKSPACE_API_KEY']),
  ];
  if (missing.length > 0) {
    return fail('runtime_config', `the runtime env file lacks ${missing.join(' and ')}`, fix);
  }
  const age = now - Date.parse(pulledAt);
  if (age > DOCTOR_LIMITS.runtimeConfigStaleMs) {
    return warn('runtime_config', `the runtime config was pulled ${ageText(age)} ago (at ${pulledAt})`, fix);
  }
  return pass('runtime_config', `pulled ${ageText(Math.max(0, age))} ago`);
}

/** `SVC_RUNTIME_INSTANCE_ID`: set, an inventory id (`rti_…`), never a bundle id (`wrt_…`), the pulled host's. */
export function runtimeInstanceIdCheck(
  envValue: string | undefined,
  pulledId: string | undefined,
): DoctorCheck {
  const id = 'runtime_instance_id';
  const value = envValue?.trim();
  const set = `export SVC_RUNTIME_INSTANCE_ID=${pulledId ?? '<rti_… from svc config pull-runtime>'}`;
  if (!value) return fail(id, 'SVC_RUNTIME_INSTANCE_ID is not set', set);
  if (value.startsWith('wrt_')) {
    return fail(id, `SVC_RUNTIME_INSTANCE_ID is a runtime bundle id (${value}), not an inventory id`, set);
  }
  if (!/^rti_[A-Za-z0-9]+$/.test(value)) {
    return fail(id, `SVC_RUNTIME_INSTANCE_ID (${value}) is not an inventory id (rti_…)`, set);
  }
  if (pulledId && value !== pulledId) {
    return fail(
      id,
      `SVC_RUNTIME_INSTANCE_ID is ${value} but the pulled runtime config is for ${pulledId}`,
      set,
    );
  }
  if (!pulledId)
    return warn(id, `${value} (no pulled runtime config to compare with)`, 'svc config pull-runtime');
  return pass(id, value);
}

export function workdirRootCheck(
  envValue: string | undefined,
  hostWorkdirRoot: string | undefined,
): DoctorCheck {
  const id = 'agent_workdir_root';
  const set = `export SVC_AGENT_WORKDIR_ROOT=${hostWorkdirRoot ?? '<the host workdir_root in Networks>'}`;
  if (!envValue) return fail(id, 'SVC_AGENT_WORKDIR_ROOT is not set', set);
  if (hostWorkdirRoot === undefined) {
    return warn(
      id,
      `${envValue} (the host's workdir_root could not be read from the hub)`,
      'svc config pull-runtime',
    );
  }
  if (envValue.replace(/\/+$/, '') !== hostWorkdirRoot.replace(/\/+$/, '')) {
    return fail(
      id,
      `SVC_AGENT_WORKDIR_ROOT is ${envValue} but the host's workdir_root is ${hostWorkdirRoot}`,
      set,
    );
  }
  return pass(id, envValue);
}

/** What the hub says of the key this host's latest heartbeat used (its `readiness.runtime_key`). */
export interface HostKeyFact {
  state: 'current' | 'superseded' | 'revoked' | 'other' | 'unknown';
  rotated_at: string | null;
  rotated_by: string | null;
  valid_until: string | null;
}

export const RUNTIME_KEY_PULL_FIX =
  'svc config pull-runtime on this host (a running svc runtime up switches to the new key by itself)';

/**
 * `runtime_key` once the hub accepted the local key: a pass, unless the host's heartbeats use a key a rotation
 * superseded (a warning with the date it stops working) or one the hub refuses now.
 */
export function runtimeKeyCheck(hostId: string, key: HostKeyFact | undefined): DoctorCheck {
  const id = 'runtime_key';
  const by = key?.rotated_by ? ` by ${key.rotated_by}` : '';
  if (key?.state === 'superseded') {
    return warn(
      id,
      `the host's heartbeats use a runtime key superseded at ${key.rotated_at ?? 'an unknown time'}${by}; it stops working at ${key.valid_until ?? 'an unknown time'}`,
      RUNTIME_KEY_PULL_FIX,
    );
  }
  if (key?.state === 'revoked') {
    return fail(
      id,
      `the host's latest heartbeat used a runtime key revoked at ${key.valid_until ?? 'an unknown time'}${by}`,
      RUNTIME_KEY_PULL_FIX,
    );
  }
  return pass(id, `the hub accepts the runtime key for ${hostId}`);
}

export function heartbeatCheck(lastHeartbeatAt: string | null | undefined, now: number): DoctorCheck {
  const id = 'heartbeat_fresh';
  const fix = 'start the runtime on this host: svc runtime up';
  if (!lastHeartbeatAt) return fail(id, 'the hub has no heartbeat from this host', fix);
  const age = now - Date.parse(lastHeartbeatAt);
  if (age > DOCTOR_LIMITS.heartbeatFreshMs) {
    return fail(id, `the last heartbeat is ${ageText(age)} old (at ${lastHeartbeatAt})`, fix);
  }
  return pass(id, `last heartbeat ${ageText(Math.max(0, age))} ago`);
}

/**
 * Hub clock minus local clock (ms) from an answer's HTTP `Date` header and when the request was sent and the
 * answer received (local ms). The header has one-second resolution, so the middle of its second is used, against
 * the middle of the round trip. Null when the header is missing or unreadable.
 */
export function skewFromDateHeader(date: string | null, sentAt: number, receivedAt: number): number | null {
  if (!date) return null;
  const hubTime = Date.parse(date);
  if (Number.isNaN(hubTime)) return null;
  return hubTime + 500 - (sentAt + receivedAt) / 2;
}

/** `skewMs` = hub clock minus local clock. The HTTP Date header has one-second resolution. */
export function clockSkewCheck(skewMs: number): DoctorCheck {
  const id = 'clock_skew';
  const abs = Math.abs(skewMs);
  const text = `the local clock is ${(abs / 1000).toFixed(1)} s ${skewMs > 0 ? 'behind' : 'ahead of'} the hub`;
  const fix = 'synchronize the clock (e.g. enable NTP: timedatectl set-ntp true)';
  if (abs > DOCTOR_LIMITS.clockSkewFailMs) return fail(id, text, fix);
  if (abs > DOCTOR_LIMITS.clockSkewWarnMs) return warn(id, text, fix);
  return pass(id, text);
}

export interface FileModeFact {
  path: string;
  kind: 'dir' | 'file';
  /** Permission bits, or null when the path does not exist. */
  mode: number | null;
}

/** Directories 0700, secret files 0600. Missing paths are not a problem here (other checks name them). */
export function fileModesCheck(facts: FileModeFact[]): DoctorCheck {
  const id = 'file_modes';
  const wrong = facts.filter((f) => f.mode !== null && f.mode !== (f.kind === 'dir' ? 0o700 : 0o600));
  if (wrong.length > 0) {
    const list = wrong.map((f) => `${f.path} is ${f.mode!.toString(8).padStart(4, '0')}`).join(', ');
    const chmods = wrong.map((f) => `chmod ${f.kind === 'dir' ? '700' : '600'} ${f.path}`).join('; ');
    return fail(id, list, `${chmods} (the next svc write re-applies the modes too)`);
  }
  const present = facts.filter((f) => f.mode !== null).length;
  return pass(id, `${present} path${present === 1 ? '' : 's'} owner-only (directories 0700, files 0600)`);
}

/** The URL a local client uses for a service bound to `bindHost` (a wildcard bind is reached on loopback). */
export function localServiceUrl(bindHost: string, port: number): string {
  const host = bindHost === '0.0.0.0' || bindHost === '' ? '127.0.0.1' : bindHost === '::' ? '::1' : bindHost;
  return `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
}

export interface DoctorSummary {
  passed: number;
  warned: number;
  failed: number;
}

export function summarizeChecks(checks: DoctorCheck[]): DoctorSummary {
  return {
    passed: checks.filter((c) => c.status === 'pass').length,
    warned: checks.filter((c) => c.status === 'warn').length,
    failed: checks.filter((c) => c.status === 'fail').length,
  };
}
