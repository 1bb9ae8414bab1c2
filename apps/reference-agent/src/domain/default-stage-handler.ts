import { exampleFromSchema } from './schema-example/example-from-schema';
import type { StageContext, StageResult } from './stage-handler';

const MAX_SUMMARY = 2000;

function clip(text: string, max: number): string {
  const chars = Array.from(text);
  return chars.length > max ? `${chars.slice(0, max - 1).join('')}…` : text;
}

/**
 * The handler used when no `AGENT_HANDLER` is configured. It does no real work: a non-final stage answers
 * with a summary of the stage and its intent; the final stage builds a payload conforming to the pinned
 * artifact schema from the intent (see `exampleFromSchema`), says so in its limitations, and publishes it.
 * The payload is repeatable for the same stage (dates come from the assignment time), so publishing again
 * after a restart is answered with the original envelope rather than a conflict.
 */
export async function defaultStageHandler(ctx: StageContext): Promise<StageResult> {
  const { stage } = ctx;
  const where = `stage ${stage.position}/${stage.stage_count} "${stage.title}" (${stage.key})`;
  // No progress note: the answer takes no time, and a note would cost the run a heartbeat round trip. A
  // handler doing real work reports progress with `ctx.progress`; the stage's timer heartbeat says it is alive.
  const intent = stage.intent.replace(/\s+/g, ' ').trim();

  if (!stage.is_final) {
    return {
      summary: clip(`Completed ${where} for the intent: ${intent}`, MAX_SUMMARY),
      evidence: {
        handler: 'default',
        note: 'The default handler records the stage and its intent; it does no domain work.',
        required_capabilities: stage.required_capabilities,
      },
    };
  }

  const schema = stage.artifact_schema;
  const now = stage.assigned_at ? new Date(stage.assigned_at) : new Date();
  const payload = exampleFromSchema(schema.json_schema, { intent, now });
  return {
    payload,
    summary: clip(
      `Completed ${where}: a result for the intent "${intent}", shaped by the artifact schema ${schema.name}@${schema.version}.`,
      MAX_SUMMARY,
    ),
    limitations: [
      'Produced by the reference agent default handler: the payload is generated from the artifact schema and the intent, not from domain work.',
    ],
    provenance: {
      handler: 'default',
      generator: 'schema-example',
      artifact_schema: `${schema.name}@${schema.version}`,
    },
    evidence: { handler: 'default', artifact_schema: `${schema.name}@${schema.version}` },
  };
}
