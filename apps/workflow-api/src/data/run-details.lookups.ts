import type { Db } from '../db';
import type { Artifact, Invocation, RunStage, WorkflowRun } from '../generated/prisma/client';

/** An invocation's run, its stages in order and the identity of its artifact (what the invocation view shows). */
export interface RunDetails {
  run: WorkflowRun | null;
  stages: RunStage[];
  artifact: Pick<Artifact, 'id' | 'schemaName' | 'schemaVersion' | 'createdAt'> | null;
}

/** An invocation with its run's progress. */
export interface InvocationView {
  invocation: Invocation;
  details: RunDetails;
}

/** Reads the run, stages and artifact identity of an invocation (three indexed reads). */
export async function loadRunDetails(
  db: Pick<Db, 'workflowRun' | 'runStage' | 'artifact'>,
  invocationId: string,
): Promise<RunDetails> {
  const [run, stages, artifact] = await Promise.all([
    db.workflowRun.findUnique({ where: { invocationId } }),
    db.runStage.findMany({ where: { invocationId }, orderBy: { position: 'asc' } }),
    db.artifact.findUnique({
      where: { invocationId },
      select: { id: true, schemaName: true, schemaVersion: true, createdAt: true },
    }),
  ]);
  return { run, stages, artifact };
}
