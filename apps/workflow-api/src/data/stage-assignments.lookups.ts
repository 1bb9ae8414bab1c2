import type { Db } from '../db';
import type { Invocation, RunStage } from '../generated/prisma/client';
import { findArtifactSchema } from './artifact-schemas.lookups';
import { loadInvocationTemplate } from './invocation-templates.lookups';

/** What the owner of a stage needs to do it: the invocation, the stage's place in the run, the pinned schema. */
export interface StageAssignmentRecord {
  stage: RunStage;
  invocation: Invocation;
  stageCount: number;
  artifactSchema: { name: string; version: string; jsonSchema: Record<string, unknown> };
}

/** Reads what the owner of `stages` needs, in the order of `stages` (a stage whose invocation is gone is left out). */
export async function loadStageAssignments(
  db: Pick<Db, 'invocation' | 'runStage' | 'workflowTemplate' | 'workflowContract' | 'artifactSchema'>,
  stages: RunStage[],
): Promise<StageAssignmentRecord[]> {
  if (stages.length === 0) return [];
  const invocationIds = [...new Set(stages.map((s) => s.invocationId))];
  const [invocations, counts] = await Promise.all([
    db.invocation.findMany({ where: { id: { in: invocationIds } } }),
    db.runStage.groupBy({
      by: ['invocationId'],
      where: { invocationId: { in: invocationIds } },
      _count: { _all: true },
    }),
  ]);
  const byId = new Map(invocations.map((i) => [i.id, i]));
  const countOf = new Map(counts.map((c) => [c.invocationId, c._count._all]));
  // Invocations of one template share its pinned schema: look each template up once per call.
  type Pinned = StageAssignmentRecord['artifactSchema'];
  const byTemplate = new Map<string, Promise<Pinned>>();
  const pinnedSchema = async (invocation: Invocation): Promise<Pinned> => {
    const template = await loadInvocationTemplate(db, invocation);
    const pinned = template?.definition.artifact_schema;
    const schema = pinned
      ? await findArtifactSchema(db, invocation.projectId, pinned.name, pinned.version)
      : null;
    return {
      name: pinned?.name ?? '',
      version: pinned?.version ?? '',
      jsonSchema: (schema?.jsonSchema as Record<string, unknown> | undefined) ?? {},
    };
  };
  const schemas = new Map<string, Pinned>();
  for (const invocation of invocations) {
    const key = `${invocation.projectId}\u0000${invocation.templateKey}\u0000${invocation.templateVersion}`;
    if (!byTemplate.has(key)) byTemplate.set(key, pinnedSchema(invocation));
    schemas.set(invocation.id, await byTemplate.get(key)!);
  }
  return stages.flatMap((stage) => {
    const invocation = byId.get(stage.invocationId);
    if (!invocation) return [];
    return [
      {
        stage,
        invocation,
        stageCount: countOf.get(stage.invocationId) ?? stage.position,
        artifactSchema: schemas.get(stage.invocationId)!,
      },
    ];
  });
}

/** The one stage's assignment view (the stage was just read, so its invocation exists). */
export async function loadStageAssignment(
  db: Parameters<typeof loadStageAssignments>[0],
  stage: RunStage,
): Promise<StageAssignmentRecord> {
  const [record] = await loadStageAssignments(db, [stage]);
  return record!;
}
