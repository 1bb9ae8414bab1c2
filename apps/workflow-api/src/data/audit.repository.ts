import { actorIdentity } from '@svc/auth';
import type { Actor } from '@svc/auth';
import { newId, redactValue } from '@svc/service-kit';
import type { Db, Sql } from '../db';

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

/** The stored row of an entry (without its time, which the table or the statement sets). */
function auditRow(entry: WorkflowAuditEntry, id: string) {
  const actor = actorIdentity(entry.actor);
  return {
    id,
    workspaceId: entry.workspaceId,
    projectId: entry.projectId ?? null,
    actorKind: actor.kind,
    actorId: actor.id,
    action: entry.action,
    targetType: entry.targetType ?? null,
    targetId: entry.targetId ?? null,
    data: redactValue(entry.data ?? {}) as object,
    requestId: entry.requestId ?? null,
  };
}

/**
 * The audit event's `INSERT` as a part of a caller's own SQL statement (a data-modifying CTE), with its
 * values in parameters `$<first>` to `$<first + 10>` and written only when `condition` holds. For a hot path
 * whose rows and event go to the database in one prepared statement (invoke, decision 62): the event commits
 * or is left out with the rows, in the same round trip. The text is fixed once the caller has numbered it, as
 * a named prepared statement needs.
 */
export function auditEventInsert(first: number, condition: string): string {
  const $ = (i: number) => `$${first + i}`;
  return `INSERT INTO audit_events (id, workspace_id, project_id, actor_kind, actor_id, action, target_type,
        target_id, data, request_id, created_at)
      SELECT ${$(0)}, ${$(1)}, ${$(2)}, ${$(3)}, ${$(4)}, ${$(5)}, ${$(6)}, ${$(7)}, ${$(8)}::jsonb, ${$(9)},
        ${$(10)}::timestamptz
      WHERE ${condition}`;
}

/**
 * {@link auditEventInsert} for several events at once: each element of the arrays in parameters `$<first>` to
 * `$<first + 10>` is one event (see `statementColumns`), so one prepared statement writes any number of them
 * (none for empty arrays).
 */
export function auditEventsInsert(first: number): string {
  const $ = (i: number) => `$${first + i}`;
  return `INSERT INTO audit_events (id, workspace_id, project_id, actor_kind, actor_id, action, target_type,
        target_id, data, request_id, created_at)
      SELECT e.id, e.workspace_id, e.project_id, e.actor_kind, e.actor_id, e.action, e.target_type, e.target_id,
        e.data::jsonb, e.request_id, e.created_at
      FROM unnest(${$(0)}::text[], ${$(1)}::text[], ${$(2)}::text[], ${$(3)}::text[], ${$(4)}::text[],
        ${$(5)}::text[], ${$(6)}::text[], ${$(7)}::text[], ${$(8)}::text[], ${$(9)}::text[],
        ${$(10)}::timestamptz[])
        AS e(id, workspace_id, project_id, actor_kind, actor_id, action, target_type, target_id, data, request_id,
          created_at)`;
}

/** The values of {@link auditEventInsert} for `entry`, dated `at` (its id too). */
function statementValues(entry: WorkflowAuditEntry, at: Date): unknown[] {
  const row = auditRow(entry, newId('aud', at.getTime()));
  return [
    row.id,
    row.workspaceId,
    row.projectId,
    row.actorKind,
    row.actorId,
    row.action,
    row.targetType,
    row.targetId,
    JSON.stringify(row.data),
    row.requestId,
    at.toISOString(),
  ];
}

/** The values of {@link auditEventsInsert} for `entries`: {@link statementValues} of each, by column. */
function statementColumns(entries: WorkflowAuditEntry[], at: Date): unknown[][] {
  const rows = entries.map((entry) => statementValues(entry, at));
  return Array.from({ length: 11 }, (_, column) => rows.map((row) => row[column]));
}

const AUDIT_EVENTS_INSERT = auditEventsInsert(1);

/** Append-only record of workflow changes; the repository offers no update or delete. */
export function createWorkflowAudit(db: Db) {
  return {
    async record(entry: WorkflowAuditEntry, tx: Pick<Db, 'auditEvent'> = db): Promise<void> {
      await tx.auditEvent.create({ data: auditRow(entry, newId('aud')) });
    },
    /**
     * Several entries in one statement (their ids taken in order), for a caller that gathers the events of
     * one transaction and writes them before its commit.
     */
    async recordMany(entries: WorkflowAuditEntry[], tx: Pick<Db, 'auditEvent'> = db): Promise<void> {
      if (entries.length === 0) return;
      await tx.auditEvent.createMany({ data: entries.map((entry) => auditRow(entry, newId('aud'))) });
    },
    /**
     * {@link recordMany} on a connection of the caller's transaction, dated `at`: one named statement, for the
     * engine's pass and the data functions it shares with the API.
     */
    async recordOn(sql: Sql, entries: WorkflowAuditEntry[], at: Date): Promise<void> {
      if (entries.length === 0) return;
      await sql.rows({
        name: 'audit_events_insert',
        text: AUDIT_EVENTS_INSERT,
        values: statementColumns(entries, at),
      });
    },
    /**
     * The values of {@link auditEventInsert} for `entry`: the row {@link record} writes, dated `at` (its id
     * too), for a caller that writes the event in its own statement.
     */
    statementValues,
    /** The values of {@link auditEventsInsert} for `entries`: {@link statementValues} of each, by column. */
    statementColumns,
  };
}

export type WorkflowAudit = ReturnType<typeof createWorkflowAudit>;
