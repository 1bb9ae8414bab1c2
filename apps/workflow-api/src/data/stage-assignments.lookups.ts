import type { Pool } from 'pg';
import { sqlOfPrisma } from '../db';
import type { Db } from '../db';
import { OPEN_STAGE_STATES } from '../domain/invocation-states';
import type { Invocation, RunStage } from '../generated/prisma/client';
import { findPinnedArtifactSchema } from './artifact-schemas.lookups';
import { loadInvocationTemplate } from './invocation-templates.lookups';
import { columnList, fieldsOf, INVOCATION_COLUMNS, RUN_STAGE_COLUMNS } from './row-columns';

/** What the owner of a stage needs to do it: the invocation, the stage's place in the run, the pinned schema. */
export interface StageAssignmentRecord {
  stage: RunStage;
  invocation: Invocation;
  stageCount: number;
  artifactSchema: { name: string; version: string; jsonSchema: Record<string, unknown> };
}

type Pinned = StageAssignmentRecord['artifactSchema'];

/**
 * Reads what the owner of `stages` needs, in the order of `stages` (a stage whose invocation is gone is left out).
 * `known` are invocations the caller already holds (read in its transaction, after its own changes): they are
 * not read again. The template and schema versions a run pins never change, so they come from the process's
 * caches after their first read, and the run's stage count is its template's (the run's stages are created
 * once, from it).
 */
export async function loadStageAssignments(
  db: Pick<Db, 'invocation' | 'runStage' | 'artifactSchema' | '$queryRawUnsafe'>,
  stages: RunStage[],
  known: Invocation[] = [],
): Promise<StageAssignmentRecord[]> {
  if (stages.length === 0) return [];
  const byId = new Map(known.map((i) => [i.id, i]));
  const missing = [...new Set(stages.map((s) => s.invocationId))].filter((id) => !byId.has(id));
  if (missing.length > 0) {
    for (const invocation of await db.invocation.findMany({ where: { id: { in: missing } } })) {
      byId.set(invocation.id, invocation);
    }
  }
  // Invocations of one template share its pinned schema and stage count: each template is looked up once.
  const byTemplate = new Map<string, Promise<{ pinned: Pinned; stageCount: number | null }>>();
  const pinnedOf = async (invocation: Invocation) => {
    const template = await loadInvocationTemplate(sqlOfPrisma(db), invocation);
    const pinned = template?.definition.artifact_schema;
    const schema = pinned
      ? await findPinnedArtifactSchema(db, invocation.projectId, pinned.name, pinned.version)
      : null;
    return {
      pinned: {
        name: pinned?.name ?? '',
        version: pinned?.version ?? '',
        jsonSchema: (schema?.jsonSchema as Record<string, unknown> | undefined) ?? {},
      },
      stageCount: template ? template.definition.stages.length : null,
    };
  };
  const records: StageAssignmentRecord[] = [];
  for (const stage of stages) {
    const invocation = byId.get(stage.invocationId);
    if (!invocation) continue;
    const key = `${invocation.projectId}\u0000${invocation.templateKey}\u0000${invocation.templateVersion}`;
    if (!byTemplate.has(key)) byTemplate.set(key, pinnedOf(invocation));
    const { pinned, stageCount } = await byTemplate.get(key)!;
    records.push({
      stage,
      invocation,
      stageCount: stageCount ?? (await stageCountOf(db, stage)),
      artifactSchema: pinned,
    });
  }
  return records;
}

/** The run's stage count read from its rows (a run whose template is gone). */
async function stageCountOf(db: Pick<Db, 'runStage'>, stage: RunStage): Promise<number> {
  const count = await db.runStage.count({ where: { invocationId: stage.invocationId } });
  return count || stage.position;
}

/** The one stage's assignment view (the stage was just read, so its invocation exists). */
export async function loadStageAssignment(
  db: Parameters<typeof loadStageAssignments>[0],
  stage: RunStage,
  invocation?: Invocation,
): Promise<StageAssignmentRecord> {
  const [record] = await loadStageAssignments(db, [stage], invocation ? [invocation] : []);
  return record!;
}

/** The most open stages an agent's listing answers. */
export const OPEN_STAGES_LIMIT = 100;

/**
 * An agent's open stages with their invocations, oldest assignment first: one statement on the pool, named so
 * each connection parses and plans it once (the listing runs each time an agent's long poll wakes).
 */
const OPEN_STAGES = {
  name: 'stage_list_open',
  text: `
    SELECT ${columnList(RUN_STAGE_COLUMNS, 's', 's_')}, ${columnList(INVOCATION_COLUMNS, 'i', 'i_')}
    FROM run_stages s JOIN invocations i ON i.id = s.invocation_id
    WHERE s.owner_agent_id = $1 AND s.workspace_id = $2 AND s.state = ANY($3::text[])
    ORDER BY s.assigned_at ASC, s.id ASC
    LIMIT ${OPEN_STAGES_LIMIT}`,
};

/**
 * The open stages (`assigned`, `claimed`, `blocked`) of `agentId` in `workspaceId`, oldest assignment first (at
 * most {@link OPEN_STAGES_LIMIT}), each with its invocation, read together (a stage whose invocation is gone is
 * left out).
 */
export async function readOpenStages(
  pool: Pool,
  agentId: string,
  workspaceId: string,
): Promise<{ stages: RunStage[]; invocations: Invocation[] }> {
  const { rows } = await pool.query<Record<string, unknown>>({
    ...OPEN_STAGES,
    values: [agentId, workspaceId, [...OPEN_STAGE_STATES]],
  });
  return {
    stages: rows.map((row) => fieldsOf<RunStage>(row, RUN_STAGE_COLUMNS, 's_')),
    invocations: rows.map((row) => fieldsOf<Invocation>(row, INVOCATION_COLUMNS, 'i_')),
  };
}
