import type { Pool } from 'pg';
import type { Db } from '../db';
import type { Artifact, Invocation, RunStage, WorkflowRun } from '../generated/prisma/client';
import {
  columnList,
  fieldsOf,
  INVOCATION_COLUMNS,
  RUN_STAGE_COLUMNS,
  WORKFLOW_RUN_COLUMNS,
} from './row-columns';

/** An invocation's run, its stages in order and the identity of its artifact (what the invocation view shows). */
export interface RunDetails {
  run: WorkflowRun | null;
  stages: RunStage[];
  artifact: Pick<Artifact, 'id' | 'schemaName' | 'schemaVersion' | 'createdAt'> | null;
  /** The invocations that retry this one, oldest first. */
  retriedAs: string[];
}

/** An invocation with its run's progress. */
export interface InvocationView {
  invocation: Invocation;
  details: RunDetails;
}

/** Reads the run, stages, artifact identity and retries of an invocation (four indexed reads; with the invocation in one: {@link readInvocationView}). */
export async function loadRunDetails(
  db: Pick<Db, 'workflowRun' | 'runStage' | 'artifact' | 'invocation'>,
  invocationId: string,
): Promise<RunDetails> {
  const [run, stages, artifact, retries] = await Promise.all([
    db.workflowRun.findUnique({ where: { invocationId } }),
    db.runStage.findMany({ where: { invocationId }, orderBy: { position: 'asc' } }),
    db.artifact.findUnique({
      where: { invocationId },
      select: { id: true, schemaName: true, schemaVersion: true, createdAt: true },
    }),
    db.invocation.findMany({
      where: { retryOf: invocationId },
      select: { id: true },
      orderBy: [{ createdAt: 'asc' }, { id: 'asc' }],
    }),
  ]);
  return { run, stages, artifact, retriedAs: retries.map((r) => r.id) };
}

const STAGE = 'stage.';
const RUN = 'run.';

/** The invocation view's one statement: `$1` the invocation, `$2` its project. */
const INVOCATION_VIEW = {
  name: 'invocation_view',
  text: `
    SELECT ${columnList(INVOCATION_COLUMNS, 'i')}, ${columnList(RUN_STAGE_COLUMNS, 's', STAGE)},
      ${columnList(WORKFLOW_RUN_COLUMNS, 'r', RUN)},
      a.id AS "artifact.id", a.schema_name AS "artifact.schemaName",
      a.schema_version AS "artifact.schemaVersion", a.created_at AS "artifact.createdAt",
      ARRAY(SELECT x.id FROM invocations x WHERE x.retry_of = i.id ORDER BY x.created_at, x.id) AS "retriedAs"
    FROM invocations i
      LEFT JOIN run_stages s ON s.invocation_id = i.id
      LEFT JOIN workflow_runs r ON r.invocation_id = i.id
      LEFT JOIN artifacts a ON a.invocation_id = i.id
    WHERE i.id = $1 AND i.project_id = $2
    ORDER BY s.position`,
};

/**
 * {@link loadRunDetails} with the invocation itself, in one statement: the invocation of `projectId` joined with
 * its stages in order, its run, its artifact's identity and the invocations retrying it. Null when the project
 * has no such invocation. On the pool it is a named statement (each connection plans it once); in a Prisma
 * transaction, the same text on the transaction's connection.
 */
export async function readInvocationView(
  db: Pick<Pool, 'query'> | Pick<Db, '$queryRawUnsafe'>,
  projectId: string,
  invocationId: string,
): Promise<InvocationView | null> {
  const rows =
    'query' in db
      ? (await db.query<Record<string, unknown>>({ ...INVOCATION_VIEW, values: [invocationId, projectId] }))
          .rows
      : await db.$queryRawUnsafe<Record<string, unknown>[]>(INVOCATION_VIEW.text, invocationId, projectId);
  const first = rows[0];
  if (!first) return null;
  return {
    invocation: fieldsOf<Invocation>(first, INVOCATION_COLUMNS),
    details: {
      run: first[`${RUN}id`] === null ? null : fieldsOf<WorkflowRun>(first, WORKFLOW_RUN_COLUMNS, RUN),
      stages: rows
        .filter((row) => row[`${STAGE}id`] !== null)
        .map((row) => fieldsOf<RunStage>(row, RUN_STAGE_COLUMNS, STAGE)),
      artifact:
        first['artifact.id'] === null
          ? null
          : {
              id: first['artifact.id'] as string,
              schemaName: first['artifact.schemaName'] as string,
              schemaVersion: first['artifact.schemaVersion'] as string,
              createdAt: first['artifact.createdAt'] as Date,
            },
      retriedAs: (first.retriedAs as string[] | null) ?? [],
    },
  };
}
