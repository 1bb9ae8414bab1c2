import type { Actor } from '@svc/auth';
import type { HubDeps } from '../../deps';
import type { Handoff, HandoffEvidence } from '../../generated/prisma/client';
import { handoffNotFound } from '../../data/handoffs.lifecycle';
import { agentCanSee } from '../../domain/handoff-states';
import { assertResourceAccess } from '../../data/resources.access';

/**
 * A handoff with its evidence (oldest first). A participant needs a membership of its workspace, a key
 * must belong to it; an agent sees its own handoffs and the open unassigned ones of its workspace. Anything
 * else — like a missing handoff — is not found.
 */
export async function getHandoff(
  deps: HubDeps,
  actor: Actor | undefined,
  handoffId: string,
): Promise<Handoff & { evidence: HandoffEvidence[] }> {
  const handoff = await deps.db.handoff.findUnique({
    where: { id: handoffId },
    include: { evidence: { orderBy: [{ createdAt: 'asc' }, { id: 'asc' }] } },
  });
  if (!handoff) throw handoffNotFound(handoffId);
  if (actor?.kind === 'agent') {
    if (!agentCanSee(actor, handoff)) throw handoffNotFound(handoffId);
    return handoff;
  }
  await assertResourceAccess(deps.db, actor, handoff.workspaceId, {
    notFound: () => handoffNotFound(handoffId),
  });
  return handoff;
}
