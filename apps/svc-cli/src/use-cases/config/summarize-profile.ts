import type { ProfileStore } from '../../data/profile-store';
import { localServiceUrl } from '../../domain/doctor-checks';

export interface ProfileSummary {
  profile: string;
  profile_path: string;
  logged_in: boolean;
  hub_url: string | null;
  workspace: string | null;
  participant: { email: string; participant_id: string; expires_at: string; expired: boolean } | null;
  runtime: {
    pulled_at: string;
    runtime_instance_id: string;
    agent_workdir_root: string;
    console_public_base_url: string;
    console_router_url: string;
    relay_url: string;
  } | null;
}

/** `svc profile`: who this profile is logged in as and which runtime host it pulled; no secrets. */
export async function summarizeProfile(store: ProfileStore, now = Date.now()): Promise<ProfileSummary> {
  const profile = await store.read();
  const p = profile.participant;
  const r = profile.runtime;
  return {
    profile: store.paths.profile,
    profile_path: store.paths.profile_path,
    logged_in: Boolean(profile.hub_url && profile.workspace && p),
    hub_url: profile.hub_url ?? null,
    workspace: profile.workspace ?? null,
    participant: p
      ? {
          email: p.email,
          participant_id: p.participant_id,
          expires_at: p.expires_at,
          expired: Date.parse(p.expires_at) <= now,
        }
      : null,
    runtime: r
      ? {
          pulled_at: r.pulled_at,
          runtime_instance_id: r.runtime_instance_id,
          agent_workdir_root: r.agent_workdir_root,
          console_public_base_url: r.consoleRouter.publicBaseUrl,
          console_router_url: localServiceUrl(r.consoleRouter.bindHost, r.consoleRouter.listenPort),
          relay_url: localServiceUrl(r.relay.bindHost, r.relay.listenPort),
        }
      : null,
  };
}
