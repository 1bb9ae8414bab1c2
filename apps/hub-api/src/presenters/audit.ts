import type { HubApi } from '@svc/contracts';
import type { AuditEvent } from '../generated/prisma/client';

type Schemas = HubApi.components['schemas'];

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function presentAuditEvent(e: AuditEvent): Schemas['AuditEvent'] {
  return {
    id: e.id,
    action: e.action,
    // Rows are written through the audit repository, whose actor kinds are exactly the contract's enum.
    actor: { kind: e.actorKind as Schemas['AuditActorKind'], id: e.actorId },
    target: e.targetType === null ? null : { type: e.targetType, id: e.targetId },
    data: isRecord(e.data) ? e.data : {},
    request_id: e.requestId,
    created_at: e.createdAt.toISOString(),
  };
}
