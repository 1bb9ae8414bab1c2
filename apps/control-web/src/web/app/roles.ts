import type { HubApi } from '@svc/sdk';

/** A participant's role in a workspace, as the hub's contract defines it. */
export type WorkspaceRole = HubApi.components['schemas']['WorkspaceRole'];

/**
 * Who may do what, mirroring the hub's `x-svc-participant-roles`: owner and admin manage members, API keys,
 * runtime hosts, agents (start, stop, evict, spawn) and audit; member also manages projects, teams and
 * workflow objects; viewer reads.
 */
export const ALL_ROLES: readonly WorkspaceRole[] = ['owner', 'admin', 'member', 'viewer'];
export const MANAGERS: readonly WorkspaceRole[] = ['owner', 'admin'];
export const EDITORS: readonly WorkspaceRole[] = ['owner', 'admin', 'member'];

export function roleAllows(role: WorkspaceRole | undefined, roles: readonly WorkspaceRole[]): boolean {
  return role !== undefined && roles.includes(role);
}
