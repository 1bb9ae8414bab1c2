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

export function actorIdentity(actor: Actor | undefined): { kind: string; id: string | null } {
  switch (actor?.kind) {
    case 'participant':
      return { kind: 'participant', id: actor.participantId };
    case 'api_key':
      return { kind: 'api_key', id: actor.keyId };
    case 'agent':
      return { kind: 'agent', id: actor.agentId };
    case 'service':
      return { kind: 'service', id: actor.service };
    case 'relay_token':
      return { kind: 'relay_token', id: null };
    default:
      return { kind: 'anonymous', id: null };
  }
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
