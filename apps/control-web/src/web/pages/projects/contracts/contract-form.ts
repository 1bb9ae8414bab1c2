import type { WorkflowApi } from '@svc/sdk';
import { workflowDocument } from '@svc/contracts/documents';
import { checkSchema } from '../schema-check';
import type { JsonSchema, SchemaError } from '../schema-check';

type Schemas = WorkflowApi.components['schemas'];
export type Contract = Schemas['ContractsContract'];
export type ContractCreateBody = Schemas['ContractsCreateRequest'];

export interface StageRow {
  key: string;
  title: string;
  capabilities: string;
}

/** What the form holds: text as typed; lists are comma- or line-separated. */
export interface ContractForm {
  name: string;
  priority: string;
  fallback: boolean;
  phrases: string;
  classifierCapabilities: string;
  templateKey: string;
  templateVersion: string;
  templateCapabilities: string;
  schemaName: string;
  schemaVersion: string;
  approval: boolean;
  stages: StageRow[];
}

export const EMPTY_FORM: ContractForm = {
  name: '',
  priority: '0',
  fallback: false,
  phrases: '',
  classifierCapabilities: '',
  templateKey: '',
  templateVersion: '1.0.0',
  templateCapabilities: '',
  schemaName: '',
  schemaVersion: '',
  approval: false,
  stages: [{ key: '', title: '', capabilities: '' }],
};

const list = (text: string, separator: RegExp) =>
  text
    .split(separator)
    .map((item) => item.trim())
    .filter((item) => item !== '');
/** Phrases: one a line (a phrase may hold commas). */
const lines = (text: string) => list(text, /\n/);
/** Capabilities: comma- or space-separated. */
const words = (text: string) => list(text, /[,\s]+/);

export function formFromContract(contract: Contract): ContractForm {
  return {
    name: contract.name,
    priority: String(contract.priority),
    fallback: contract.fallback,
    phrases: contract.classifier.intentContains.join('\n'),
    classifierCapabilities: contract.classifier.requiredCapabilities.join(', '),
    templateKey: contract.template.key,
    templateVersion: contract.template.version,
    templateCapabilities: contract.template.required_capabilities.join(', '),
    schemaName: contract.template.artifact_schema.name,
    schemaVersion: contract.template.artifact_schema.version,
    approval: contract.template.guardrails.human_approval_required,
    stages: contract.template.stages.map((s) => ({
      key: s.key,
      title: s.title,
      capabilities: s.required_capabilities.join(', '),
    })),
  };
}

/**
 * The request body the form stands for. Metadata criteria and the guardrails other than approval are kept
 * from the contract being edited (the form does not show them), so saving never drops them.
 */
export function bodyFromForm(form: ContractForm, editing?: Contract): ContractCreateBody {
  const priority = form.priority.trim() === '' ? NaN : Number(form.priority);
  const stages = form.stages
    .filter((s) => s.key !== '' || s.title !== '' || s.capabilities !== '')
    .map((s) => ({ key: s.key.trim(), title: s.title.trim(), required_capabilities: words(s.capabilities) }));
  const metadata = editing?.classifier.metadata ?? {};
  const classifier = form.fallback
    ? undefined
    : {
        intentContains: lines(form.phrases),
        requiredCapabilities: words(form.classifierCapabilities),
        ...(Object.keys(metadata).length > 0 ? { metadata } : {}),
      };
  const kept = editing?.template.guardrails;
  return {
    name: form.name.trim(),
    priority: priority as number,
    fallback: form.fallback,
    ...(classifier ? { classifier } : {}),
    template: {
      key: form.templateKey.trim(),
      version: form.templateVersion.trim(),
      required_capabilities: words(form.templateCapabilities),
      artifact_schema: { name: form.schemaName.trim(), version: form.schemaVersion.trim() },
      guardrails: {
        human_approval_required: form.approval,
        ...(kept?.stage_failure_retries !== undefined
          ? { stage_failure_retries: kept.stage_failure_retries }
          : {}),
        ...(kept?.run_deadline_seconds !== undefined
          ? { run_deadline_seconds: kept.run_deadline_seconds }
          : {}),
        ...(kept?.artifact_rejections_allowed !== undefined
          ? { artifact_rejections_allowed: kept.artifact_rejections_allowed }
          : {}),
      },
      ...(stages.length > 0 ? { stages } : {}),
    },
  };
}

const components = (workflowDocument.components ?? {}) as { schemas?: Record<string, JsonSchema> };

/**
 * The body's errors against the contract's own JSON Schema (`ContractsCreateRequest` of the Workflow API's
 * document), plus the rules the server states in words that a person can fix in the form: a classifier
 * needs a criterion unless the contract is the fallback, and stage keys are unique.
 */
export function validateContract(body: ContractCreateBody): SchemaError[] {
  const schema = components.schemas?.ContractsCreateRequest;
  if (schema === undefined) throw new Error('the Workflow API document has no ContractsCreateRequest');
  const errors = checkSchema(body, schema, components).map((e) =>
    e.path === '/priority' && Number.isNaN(body.priority) ? { ...e, message: 'must be a whole number' } : e,
  );
  if (!body.fallback) {
    const c = body.classifier;
    const criteria =
      (c?.intentContains?.length ?? 0) +
      (c?.requiredCapabilities?.length ?? 0) +
      Object.keys(c?.metadata ?? {}).length;
    if (criteria === 0)
      errors.push({
        path: '/classifier',
        message: 'needs at least one phrase or capability (or make the contract the fallback)',
      });
  }
  const seen = new Set<string>();
  (body.template.stages ?? []).forEach((stage, index) => {
    if (stage.key !== '' && seen.has(stage.key))
      errors.push({ path: `/template/stages/${index}/key`, message: 'is used by an earlier stage' });
    seen.add(stage.key);
  });
  return errors;
}

/** Which form field shows an error of this JSON Pointer. */
export function fieldOf(path: string): string {
  const stage = /^\/template\/stages\/(\d+)(?:\/(key|title|required_capabilities))?/.exec(path);
  if (stage)
    return `stage-${stage[1]}-${stage[2] === 'required_capabilities' ? 'capabilities' : (stage[2] ?? 'key')}`;
  if (path.startsWith('/classifier/intentContains')) return 'phrases';
  if (path.startsWith('/classifier/requiredCapabilities')) return 'classifierCapabilities';
  if (path.startsWith('/classifier')) return 'phrases';
  if (path.startsWith('/template/key')) return 'templateKey';
  if (path.startsWith('/template/version')) return 'templateVersion';
  if (path.startsWith('/template/required_capabilities')) return 'templateCapabilities';
  if (path.startsWith('/template/artifact_schema/name')) return 'schemaName';
  if (path.startsWith('/template/artifact_schema/version')) return 'schemaVersion';
  if (path.startsWith('/template/artifact_schema')) return 'schemaName';
  if (path.startsWith('/template/stages')) return 'stage-0-key';
  if (path.startsWith('/priority')) return 'priority';
  if (path.startsWith('/name')) return 'name';
  return 'form';
}
