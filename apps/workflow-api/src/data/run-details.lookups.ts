import type { Db } from '../db';
import type { Artifact, Invocation, RunStage, WorkflowRun } from '../generated/prisma/client';

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

/** Reads the run, stages, artifact identity and retries of an invocation (four indexed reads). */
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
