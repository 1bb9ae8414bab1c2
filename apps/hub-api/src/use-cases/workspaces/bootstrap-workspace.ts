import { newId } from '@svc/service-kit';
import { hashPassword, verifyPassword } from '../../auth/passwords';
import type { Db } from '../../db';

export interface BootstrapInput {
  workspaceSlug: string;
  workspaceName: string;
  adminEmail: string;
  adminPassword: string;
  adminName?: string;
}

/**
 * Makes sure a workspace and its first owner exist — how an installation gets its first participant,
 * since nobody can sign in to create one yet. Running it again changes nothing (a password that no
 * longer matches is reset to the given one).
 */
export async function bootstrapWorkspace(db: Db, input: BootstrapInput) {
  const email = input.adminEmail.trim().toLowerCase();
  const existing = await db.participant.findUnique({ where: { email } });
  const passwordHash =
    existing && (await verifyPassword(input.adminPassword, existing.passwordHash))
      ? existing.passwordHash
      : await hashPassword(input.adminPassword);
  return db.$transaction(async (tx) => {
    const participant = existing
      ? await tx.participant.update({
          where: { id: existing.id },
          data: { passwordHash, failedLoginCount: 0, lockedUntil: null },
        })
      : await tx.participant.create({
          data: { id: newId('prt'), email, displayName: input.adminName ?? 'Administrator', passwordHash },
        });
    const workspace = await tx.workspace.upsert({
      where: { slug: input.workspaceSlug },
      update: {},
      create: { id: newId('ws'), slug: input.workspaceSlug, name: input.workspaceName },
    });
    await tx.membership.upsert({
      where: { workspaceId_participantId: { workspaceId: workspace.id, participantId: participant.id } },
      update: { role: 'owner' },
      create: { workspaceId: workspace.id, participantId: participant.id, role: 'owner' },
    });
    await tx.auditEvent.create({
      data: {
        id: newId('aud'),
        workspaceId: workspace.id,
        actorKind: 'service',
        actorId: 'bootstrap',
        action: 'workspace.bootstrapped',
        targetType: 'participant',
        targetId: participant.id,
        data: { email },
      },
    });
    return { workspace, participant };
  });
}
