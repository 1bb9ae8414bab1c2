import type { Actor } from '@svc/auth';
import { newId } from '@svc/service-kit';
import type { WorkflowApi } from '@svc/contracts';
import type { ProjectRef } from '../../auth/project-directory';
import { loadContractRecord, saveTemplateVersion } from '../../data/workflow-template.store';
import type { WorkflowDeps } from '../../deps';
import { checkContractRules, classifierOf } from '../../domain/contract-rules';
import type { ContractRecord } from '../../domain/contract-rules';

export type CreateContractInput = WorkflowApi.components['schemas']['ContractsCreateRequest'];

/** Creates a contract and stores (or reuses) its template version, with one `workflow_contract.created` event. */
export async function createWorkflowContract(
  deps: WorkflowDeps,
  actor: Actor,
  project: ProjectRef,
  input: CreateContractInput,
  requestId?: string,
): Promise<ContractRecord> {
  const classifier = classifierOf(input.classifier);
  const fallback = input.fallback ?? false;
  checkContractRules(classifier, fallback, input.template);
  const contract = await deps.db.$transaction(async (tx) => {
    const template = await saveTemplateVersion(tx, project.id, input.template);
    const now = deps.now();
    const row = await tx.workflowContract.create({
      data: {
        id: newId('wfc'),
        workspaceId: project.workspace.id,
        projectId: project.id,
        name: input.name,
        priority: input.priority ?? 0,
        classifier: classifier as object,
        isFallback: fallback,
        templateKey: input.template.key,
        templateVersion: input.template.version,
        isActive: input.is_active ?? true,
        createdAt: now,
        updatedAt: now,
      },
    });
    await deps.audit.record(
      {
        workspaceId: project.workspace.id,
        projectId: project.id,
        actor,
        action: 'workflow_contract.created',
        targetType: 'workflow_contract',
        targetId: row.id,
        data: {
          name: row.name,
          priority: row.priority,
          fallback,
          is_active: row.isActive,
          template_key: row.templateKey,
          template_version: row.templateVersion,
          template,
        },
        requestId,
      },
      tx,
    );
    return loadContractRecord(tx, row);
  });
  await deps.contractIndex.changed({ id: project.id, workspaceId: project.workspace.id });
  return contract;
}
