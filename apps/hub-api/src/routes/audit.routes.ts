import { workspaceOf } from '../auth/workspace-guard';
import type { HubDeps } from '../deps';
import { presentAuditEvent } from '../presenters/audit';
import { listAuditEvents } from '../use-cases/audit/list-audit-events';
import type { HubHandlers } from './types';

/** Read access to the audit log. There is deliberately no operation that writes, edits or deletes events. */
export function auditHandlers(deps: HubDeps): HubHandlers<'listAuditEvents'> {
  return {
    async listAuditEvents(ctx) {
      const { query } = ctx;
      const page = await listAuditEvents(deps, workspaceOf(ctx).id, {
        action: query.action,
        actorKind: query.actor_kind,
        actorId: query.actor_id,
        targetType: query.target_type,
        targetId: query.target_id,
        since: query.since,
        until: query.until,
        limit: query.limit,
        cursor: query.cursor,
      });
      return {
        status: 200,
        body: { data: page.events.map(presentAuditEvent), next_cursor: page.nextCursor },
      };
    },
  };
}
