import type { Tx } from '../db';
import type { Invocation } from '../generated/prisma/client';
import { effectiveDefinition, parseTemplateDefinition } from '../domain/template-definition';
import type { RouteTemplate } from '../domain/template-definition';

/** The template an invocation pinned (stages explicit), or null when its route names none or it is gone. */
export async function loadInvocationTemplate(
  db: Pick<Tx, 'workflowTemplate' | 'workflowContract'>,
  invocation: Pick<Invocation, 'projectId' | 'contractId' | 'templateKey' | 'templateVersion'>,
): Promise<RouteTemplate | null> {
  if (!invocation.templateKey || !invocation.templateVersion) return null;
  const [row, contract] = await Promise.all([
    db.workflowTemplate.findUnique({
      where: {
        projectId_key_version: {
          projectId: invocation.projectId,
          key: invocation.templateKey,
          version: invocation.templateVersion,
        },
      },
    }),
    invocation.contractId
      ? db.workflowContract.findUnique({ where: { id: invocation.contractId }, select: { name: true } })
      : Promise.resolve(null),
  ]);
  if (!row) return null;
  return {
    key: row.key,
    version: row.version,
    definition: effectiveDefinition(
      row.key,
      parseTemplateDefinition(row.definition),
      contract?.name ?? row.key,
    ),
  };
}
