import type { ParticipantRole } from '@svc/service-kit';

/**
 * Workspace roles that create and manage collaboration objects (handoffs, repos and their credentials,
 * workflow drafts) and send messages to agents. Viewers read only.
 */
export const COLLABORATOR_ROLES = ['owner', 'admin', 'member'] as const satisfies readonly ParticipantRole[];
/** Roles that manage teams and project assignments. */
export const TEAM_MANAGER_ROLES = ['owner', 'admin', 'member'] as const satisfies readonly ParticipantRole[];
/** Roles that create, rename, archive and unarchive projects. */
export const PROJECT_EDITOR_ROLES = [
  'owner',
  'admin',
  'member',
] as const satisfies readonly ParticipantRole[];
/** Roles that register, start, stop, evict and delete agents. */
export const AGENT_OPERATOR_ROLES = ['owner', 'admin'] as const satisfies readonly ParticipantRole[];
/** Roles that rotate a runtime host's relay token. */
export const RELAY_TOKEN_ROTATOR_ROLES = ['owner', 'admin'] as const satisfies readonly ParticipantRole[];
