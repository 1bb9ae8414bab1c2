import { actorIdentity } from '@svc/auth';
import type { Actor } from '@svc/auth';
import { newId, redactValue } from '@svc/service-kit';
import type { Db } from '../db';

export interface AuditEntry {
  workspaceId?: string | null;
  actor?: Actor | undefined;
  action: string;
  targetType?: string;
  targetId?: string;
  /** Context of the action; redacted again here, so a secret that slips in is never stored. */
  data?: Record<string, unknown>;
  requestId?: string;
}

/** Append-only: the repository offers no update or delete. */
export function createAuditRepository(db: Db) {
  return {
    async record(entry: AuditEntry, tx: Pick<Db, 'auditEvent'> = db): Promise<void> {
      const actor = actorIdentity(entry.actor);
      await tx.auditEvent.create({
        data: {
          id: newId('aud'),
          workspaceId: entry.workspaceId ?? null,
          actorKind: actor.kind,
          actorId: actor.id,
          action: entry.action,
          targetType: entry.targetType ?? null,
          targetId: entry.targetId ?? null,
          data: redactValue(entry.data ?? {}) as object,
          requestId: entry.requestId ?? null,
        },
      });
    },
  };
}

export type AuditRepository = ReturnType<typeof createAuditRepository>;
