import type { WorkflowDeps } from '../../deps';
import type { AuditEvent } from '../../generated/prisma/client';

/** The project's model calls (audit events `assistance.called`), newest first. */
export function listAssistanceCalls(
  deps: WorkflowDeps,
  projectId: string,
  limit: number,
): Promise<AuditEvent[]> {
  return deps.db.auditEvent.findMany({
    where: { projectId, action: 'assistance.called' },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    take: limit,
  });
}
