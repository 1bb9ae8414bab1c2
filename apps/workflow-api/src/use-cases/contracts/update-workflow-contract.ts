import type { Actor } from '@svc/auth';
import { AppError } from '@svc/service-kit';
import { canonicalJson } from '@svc/contracts';
import type { WorkflowApi } from '@svc/contracts';
import type { ProjectRef } from '../../auth/project-directory';
import { loadContractRecord, saveTemplateVersion } from '../../data/workflow-template.store';
import type { WorkflowDeps } from '../../deps';
import {
  checkContractRules,
  classifierOf,
  contractTemplate,
  storedClassifier,
} from '../../domain/contract-rules';
import type { ContractRecord } from '../../domain/contract-rules';
import { contractNotFound } from '../../domain/errors';
import { templateDefinitionOf } from '../../domain/template-definition';
import type { TemplateWire } from '../../domain/template-definition';

export type UpdateContractInput = WorkflowApi.components['schemas']['ContractsPatchRequest'];

/**
 * Applies a partial change under a row lock. `is_active: false` retires the contract (audit
 * `workflow_contract.retired`); any other change is `workflow_contract.updated`. A request that changes nothing
 * returns the contract as it is, without a new revision or event.
 */
export async function updateWorkflowContract(
  deps: WorkflowDeps,
  actor: Actor,
  project: ProjectRef,
  contractId: string,
  input: UpdateContractInput,
  requestId?: string,
): Promise<ContractRecord> {
  if (Object.values(input).every((value) => value === undefined)) {
    throw new AppError({ status: 400, code: 'patch_empty', detail: 'Send at least one field to change.' });
  }
  let changed = false;
  const contract = await deps.db.$transaction(async (tx) => {
    const locked = await tx.$queryRaw<{ id: string }[]>`
      SELECT id FROM workflow_contracts WHERE id = ${contractId} AND project_id = ${project.id} FOR UPDATE`;
    if (locked.length === 0) throw contractNotFound(contractId);
    const row = await tx.workflowContract.findUniqueOrThrow({ where: { id: contractId } });
    const current = await loadContractRecord(tx, row);
    const currentTemplate = contractTemplate(current);
    const currentClassifier = storedClassifier(row);
    const classifier = input.classifier ? classifierOf(input.classifier) : currentClassifier;
    const fallback = input.fallback ?? row.isFallback;
    const template: TemplateWire = input.template ?? currentTemplate;
    checkContractRules(classifier, fallback, template);

    const fields: string[] = [];
    if (input.name !== undefined && input.name !== row.name) fields.push('name');
    if (input.priority !== undefined && input.priority !== row.priority) fields.push('priority');
    if (input.classifier && canonicalJson(classifier) !== canonicalJson(currentClassifier))
      fields.push('classifier');
    if (input.fallback !== undefined && input.fallback !== row.isFallback) fields.push('fallback');
    const templateChanged =
      input.template !== undefined &&
      (input.template.key !== row.templateKey ||
        input.template.version !== row.templateVersion ||
        canonicalJson(templateDefinitionOf(input.template)) !==
          canonicalJson(templateDefinitionOf(currentTemplate)));
    if (templateChanged) fields.push('template');
    if (input.is_active !== undefined && input.is_active !== row.isActive) fields.push('is_active');
    if (fields.length === 0) return current;

    changed = true;
    const templateResult = templateChanged ? await saveTemplateVersion(tx, project.id, template) : undefined;
    const updated = await tx.workflowContract.update({
      where: { id: contractId },
      data: {
        name: input.name ?? row.name,
        priority: input.priority ?? row.priority,
        classifier: classifier as object,
        isFallback: fallback,
        templateKey: template.key,
        templateVersion: template.version,
        isActive: input.is_active ?? row.isActive,
        revision: { increment: 1 },
        updatedAt: deps.now(),
      },
    });
    const retired = fields.includes('is_active') && !updated.isActive;
    await deps.audit.record(
      {
        workspaceId: project.workspace.id,
        projectId: project.id,
        actor,
        action: retired ? 'workflow_contract.retired' : 'workflow_contract.updated',
        targetType: 'workflow_contract',
        targetId: contractId,
        data: {
          fields,
          revision: updated.revision,
          is_active: updated.isActive,
          template_key: updated.templateKey,
          template_version: updated.templateVersion,
          ...(templateResult ? { template: templateResult } : {}),
        },
        requestId,
      },
      tx,
    );
    return loadContractRecord(tx, updated);
  });
  if (changed) await deps.contractIndex.changed({ id: project.id, workspaceId: project.workspace.id });
  return contract;
}
