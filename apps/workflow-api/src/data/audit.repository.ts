import { actorIdentity } from '@svc/auth';
import type { Actor } from '@svc/auth';
import { newId, redactValue } from '@svc/service-kit';
import type { Db } from '../db';

export interface WorkflowAuditEntry {
  workspaceId: string;
  projectId?: string | null;
  actor?: Actor;
  action: string;
  targetType?: string;
  targetId?: string;
  /** Redacted again here, so a secret that slips in is never stored. */
  data?: Record<string, unknown>;
  requestId?: string;
}

/** Append-only record of workflow changes; the repository offers no update or delete. */
export function createWorkflowAudit(db: Db) {
  return {
    async record(entry: WorkflowAuditEntry, tx: Pick<Db, 'auditEvent'> = db): Promise<void> {
      const actor = actorIdentity(entry.actor);
      await tx.auditEvent.create({
        data: {
          id: newId('aud'),
          workspaceId: entry.workspaceId,
          projectId: entry.projectId ?? null,
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

export type WorkflowAudit = ReturnType<typeof createWorkflowAudit>;
