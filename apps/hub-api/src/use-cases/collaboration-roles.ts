import type { ParticipantRole } from '@svc/service-kit';

/**
 * Workspace roles that create and manage collaboration objects (handoffs, repos and their credentials,
 * workflow drafts) and send messages to agents. Viewers read only.
 */
export const COLLABORATOR_ROLES = ['owner', 'admin', 'member'] as const satisfies readonly ParticipantRole[];
