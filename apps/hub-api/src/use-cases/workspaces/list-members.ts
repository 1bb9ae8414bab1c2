import type { HubDeps } from '../../deps';

export function listMembers(deps: HubDeps, workspaceId: string) {
  return deps.db.membership.findMany({
    where: { workspaceId },
    include: { participant: true },
    orderBy: [{ createdAt: 'asc' }, { participantId: 'asc' }],
  });
}
