import { inPooledTransaction } from '@svc/db-kit';
import type { Pool } from 'pg';
import type { Artifact, Invocation, RunStage, WorkflowRun } from '../generated/prisma/client';
import { auditEventInsert } from './audit.repository';
import type { WorkflowAudit, WorkflowAuditEntry } from './audit.repository';
import {
  ARTIFACT_COLUMNS,
  columnList,
  fieldsOf,
  INVOCATION_COLUMNS,
  RUN_STAGE_COLUMNS,
  WORKFLOW_RUN_COLUMNS,
} from './row-columns';

/**
 * What the rest of a publication depends on besides the invocation row: its stages, its run and whether it has an
 * artifact, as one text digest of `$1`'s rows. The publication's read answers it and its write compares it again.
 */
const RUN_STATE = `md5(
    coalesce((SELECT string_agg(x::text, ',' ORDER BY x.position) FROM run_stages x WHERE x.invocation_id = $1), '')
    || '|' || coalesce((SELECT w::text FROM workflow_runs w WHERE w.invocation_id = $1), '')
    || '|' || coalesce((SELECT a.id FROM artifacts a WHERE a.invocation_id = $1), ''))`;

/** The project's live subscriptions of `alias` wanting the event `$<event>` (the events are a JSON list of names). */
const wants = (alias: string, event: string) =>
  `${alias}.project_id = $2 AND ${alias}.is_active AND ${alias}.deleted_at IS NULL
    AND jsonb_typeof(${alias}.events) = 'array' AND ${alias}.events ? ${event}::text`;

const STAGE = 'stage.';
const RUN = 'run.';

/**
 * A publication's first statement: the invocation `$1` of project `$2` locked (`FOR UPDATE`, as every writer of
 * its run locks it first) and read with its stages in order, its run, its artifact's id, the digest of those
 * ({@link RUN_STATE}) and the project's subscriptions to the event `$3` (by id).
 *
 * The joined rows are read as of the statement's start: when another writer held the lock and committed while
 * this statement waited for it, the invocation row is its new version but the other rows may be older. The
 * write statement therefore compares the digest again (it starts under the lock, so it reads the latest rows)
 * and writes nothing when it changed.
 */
const READ = {
  name: 'artifact_publication_read',
  text: `
    WITH seen AS (SELECT ${RUN_STATE} AS state),
    subscribers AS (
      SELECT ARRAY(SELECT d.id FROM delivery_subscriptions d WHERE ${wants('d', '$3')} ORDER BY d.id) AS ids
    )
    SELECT ${columnList(INVOCATION_COLUMNS, 'i')}, ${columnList(RUN_STAGE_COLUMNS, 's', STAGE)},
      ${columnList(WORKFLOW_RUN_COLUMNS, 'r', RUN)}, a.id AS "artifactId", seen.state AS "seen",
      subscribers.ids AS "subscriberIds"
    FROM invocations i
      CROSS JOIN seen
      CROSS JOIN subscribers
      LEFT JOIN run_stages s ON s.invocation_id = i.id
      LEFT JOIN workflow_runs r ON r.invocation_id = i.id
      LEFT JOIN artifacts a ON a.invocation_id = i.id
    WHERE i.id = $1 AND i.project_id = $2
    ORDER BY s.position
    FOR UPDATE OF i`,
};

/** Where the values of the three audit events begin in {@link WRITE}. */
const PUBLISHED_EVENT = 28;
const COMPLETED_EVENT = PUBLISHED_EVENT + 11;
const STAGE_EVENT = COMPLETED_EVENT + 11;

/**
 * A valid publication's one data-modifying statement, under the invocation's lock: when the digest of the run's
 * rows is still the one read (`guard`), the final stage's evidence, the final stage completed (`$6`, null when
 * this publication does not complete it), the artifact, the invocation completed, its run ended, the audit
 * events (the audit recorder's part; the stage's only with the stage) and one delivery per live subscription
 * that wants the event (each at most once, as the unique key of a delivery says). Answers the artifact and the
 * ids of the deliveries, or no row when the digest changed (then nothing was written).
 */
const WRITE = {
  name: 'artifact_publication_write',
  text: `
    WITH guard AS (SELECT 1 AS ok WHERE ${RUN_STATE} = $3),
    evidence AS (
      INSERT INTO stage_evidence (id, stage_id, agent_id, kind, content, created_at)
      SELECT e.id, $9, $10, e.kind, e.content, e.created_at
      FROM guard CROSS JOIN jsonb_to_recordset($11::jsonb)
        AS e(id text, kind text, content jsonb, created_at timestamptz)
      RETURNING id
    ),
    stage AS (
      UPDATE run_stages
      SET state = 'completed', completed_at = $4::timestamptz, last_heartbeat_at = $4::timestamptz,
        blocker_reason = NULL, summary = CASE WHEN $7::boolean THEN $8::text ELSE summary END
      WHERE id = $6 AND EXISTS (SELECT 1 FROM guard)
      RETURNING id
    ),
    artifact AS (
      INSERT INTO artifacts (id, invocation_id, run_id, workspace_id, project_id, schema_id, schema_name,
        schema_version, version, summary, payload, payload_hash, provenance, limitations, created_by_kind,
        created_by_id, created_at)
      SELECT $12, $1, $13, $14, $2, $15, $16, $17, 1, $18, $19::jsonb, $20, $21::jsonb, $22::jsonb, $23, $24,
        $4::timestamptz
      FROM guard
      RETURNING ${columnList(ARTIFACT_COLUMNS, 'artifacts')}
    ),
    completed AS (
      UPDATE invocations
      SET state = 'completed', attention = 'none', attention_reason = NULL, blockers = '[]'::jsonb,
        completed_at = $4::timestamptz, updated_at = $5::timestamptz
      WHERE id = $1 AND EXISTS (SELECT 1 FROM guard)
      RETURNING id
    ),
    ended AS (
      UPDATE workflow_runs SET state = 'ended', ended_at = $4::timestamptz
      WHERE invocation_id = $1 AND ended_at IS NULL AND EXISTS (SELECT 1 FROM guard)
      RETURNING id
    ),
    published_event AS (
      ${auditEventInsert(PUBLISHED_EVENT, 'EXISTS (SELECT 1 FROM guard)')}
      RETURNING id
    ),
    completed_event AS (
      ${auditEventInsert(COMPLETED_EVENT, 'EXISTS (SELECT 1 FROM guard)')}
      RETURNING id
    ),
    stage_event AS (
      ${auditEventInsert(STAGE_EVENT, 'EXISTS (SELECT 1 FROM stage)')}
      RETURNING id
    ),
    delivered AS (
      INSERT INTO deliveries (id, subscription_id, workspace_id, project_id, invocation_id, event, body,
        next_attempt_at)
      SELECT m.id, d.id, $14, $2, $1, $26::text, $27, $4::timestamptz
      FROM guard
        CROSS JOIN jsonb_to_recordset($25::jsonb) AS m(id text, subscription_id text)
        JOIN delivery_subscriptions d ON d.id = m.subscription_id
      WHERE ${wants('d', '$26')}
      ON CONFLICT DO NOTHING
      RETURNING id
    )
    SELECT artifact.*, ARRAY(SELECT id FROM delivered) AS "deliveryIds" FROM artifact`,
};

/** What a publication finds under the invocation's lock. */
export interface PublicationRead {
  invocation: Invocation;
  /** Its stages in order. */
  stages: RunStage[];
  run: WorkflowRun | null;
  /** The id of its artifact, when one is published. */
  artifactId: string | null;
  /** The project's live subscriptions wanting the event, by id. */
  subscriberIds: string[];
}

/** A valid publication's rows (see {@link WRITE}); the JSON values as they are stored. */
export interface PublicationWrite {
  now: Date;
  /** The final stage this publication completes, its summary (when one was sent) and its audit event. */
  stageCompletion: { stageId: string; summary: string | undefined; event: WorkflowAuditEntry } | null;
  /** Evidence of the final stage by its owner, rows already redacted and dated. */
  evidence: {
    stageId: string;
    agentId: string;
    rows: { id: string; kind: string; content: unknown; createdAt: Date }[];
  } | null;
  artifact: Omit<Artifact, 'invocationId' | 'projectId' | 'version' | 'createdAt'>;
  /** The `artifact.published` and `invocation.completed` events. */
  events: [WorkflowAuditEntry, WorkflowAuditEntry];
  /** One delivery id for each subscription read, the event and its body. */
  deliveries: { ids: { id: string; subscriptionId: string }[]; event: string; body: string };
}

function readOf(rows: Record<string, unknown>[]): { read: PublicationRead; seen: string } | null {
  const first = rows[0];
  if (!first) return null;
  return {
    read: {
      invocation: fieldsOf<Invocation>(first, INVOCATION_COLUMNS),
      stages: rows
        .filter((row) => row[`${STAGE}id`] !== null)
        .map((row) => fieldsOf<RunStage>(row, RUN_STAGE_COLUMNS, STAGE)),
      run: first[`${RUN}id`] === null ? null : fieldsOf<WorkflowRun>(first, WORKFLOW_RUN_COLUMNS, RUN),
      artifactId: (first.artifactId as string | null) ?? null,
      subscriberIds: (first.subscriberIds as string[] | null) ?? [],
    },
    seen: first.seen as string,
  };
}

function writeValues(
  audit: WorkflowAudit,
  invocation: Invocation,
  seen: string,
  write: PublicationWrite,
): unknown[] {
  const { now, stageCompletion, evidence, artifact, events, deliveries } = write;
  const wallClock = new Date();
  return [
    invocation.id,
    invocation.projectId,
    seen,
    now.toISOString(),
    wallClock.toISOString(),
    stageCompletion?.stageId ?? null,
    stageCompletion?.summary !== undefined,
    stageCompletion?.summary ?? null,
    evidence?.stageId ?? null,
    evidence?.agentId ?? null,
    JSON.stringify(
      (evidence?.rows ?? []).map((row) => ({
        id: row.id,
        kind: row.kind,
        content: row.content,
        created_at: row.createdAt.toISOString(),
      })),
    ),
    artifact.id,
    artifact.runId,
    artifact.workspaceId,
    artifact.schemaId,
    artifact.schemaName,
    artifact.schemaVersion,
    artifact.summary,
    JSON.stringify(artifact.payload),
    artifact.payloadHash,
    JSON.stringify(artifact.provenance),
    JSON.stringify(artifact.limitations),
    artifact.createdByKind,
    artifact.createdById,
    JSON.stringify(deliveries.ids.map((d) => ({ id: d.id, subscription_id: d.subscriptionId }))),
    deliveries.event,
    deliveries.body,
    // The events are dated when they are written, as the recorder's own rows are.
    ...audit.statementValues(events[0], wallClock),
    ...audit.statementValues(events[1], wallClock),
    ...(stageCompletion
      ? audit.statementValues(stageCompletion.event, wallClock)
      : Array.from({ length: 11 }, () => null)),
  ];
}

/**
 * A valid publication in one transaction on a pooled connection, four statements (decision 102): `BEGIN`, the
 * invocation locked and read ({@link READ}), the write ({@link WRITE}), `COMMIT`. `plan` decides from what was
 * read: the rows to write, or null when this publication is not a valid one to write here (a problem to answer,
 * a replay, a refused payload). Null, and nothing written, also when the rows read under the lock had changed
 * by the write (another writer committed while the read waited for the lock). Null when the project has no such
 * invocation. Answers the artifact as stored and the ids of the deliveries recorded.
 */
export async function publishUnderLock(
  pool: Pool,
  audit: WorkflowAudit,
  target: { projectId: string; invocationId: string; event: string },
  plan: (read: PublicationRead) => Promise<PublicationWrite | null>,
): Promise<{ artifact: Artifact; deliveryIds: string[] } | null> {
  const written = await inPooledTransaction(
    pool,
    async (client) => {
      const { rows } = await client.query<Record<string, unknown>>({
        ...READ,
        values: [target.invocationId, target.projectId, target.event],
      });
      const found = readOf(rows);
      const write = found ? await plan(found.read) : null;
      if (!found || !write) return null;
      const {
        rows: [row],
      } = await client.query<Record<string, unknown>>({
        ...WRITE,
        values: writeValues(audit, found.read.invocation, found.seen, write),
      });
      return row ?? null;
    },
    // Nothing to write here, or the rows changed under the read: nothing is kept.
    { commitIf: (row) => row !== null },
  );
  if (!written) return null;
  return {
    artifact: fieldsOf<Artifact>(written, ARTIFACT_COLUMNS),
    deliveryIds: (written.deliveryIds as string[] | null) ?? [],
  };
}
