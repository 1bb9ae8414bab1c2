import type { HubClient } from '@svc/contracts';
import type { Profile, PulledRuntime } from '../../data/profile-store';
import { CliError } from '../../domain/cli-error';

/** What every agent command on a runtime host works with: the hub, the profile and its runtime files. */
export interface HostContext {
  hub: HubClient;
  hubUrl: string;
  /** Workspace slug. */
  workspace: string;
  profile: Profile;
  /** The profile's owner-only state directory (`<config dir>/run/<profile>`). */
  stateDir: string;
}

/** The pulled runtime config of the profile, or "pull it first". */
export function requirePulledRuntime(profile: Profile): PulledRuntime {
  if (!profile.runtime) {
    throw new CliError({
      code: 'runtime_config_missing',
      message: 'this profile has no runtime config; agents start only on a runtime host',
      fix: 'svc config pull-runtime (or svc login --pull-runtime)',
      exit: 4,
    });
  }
  return profile.runtime;
}

/** The host this profile's runtime config names (`rti_…`): where `svc list`, `stop` and `ask` look. */
export function pulledHostId(profile: Profile): string {
  return requirePulledRuntime(profile).runtime_instance_id;
}
