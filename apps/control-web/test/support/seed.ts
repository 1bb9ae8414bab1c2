import { randomBytes } from 'node:crypto';
import { eventually } from '@svc/testing';
import type { BrowserStack } from './stack';

/** What `seedWorkflow` made: a contract with two `report` stages, and invocations in several states. */
export interface SeededWorkflow {
  schemaName: string;
  contractName: string;
  phrase: string;
  /** An invocation the reference agent completed: it has stages, an artifact and its envelope. */
  completedId: string;
  /** An invocation invoked and never launched (state `received`). */
  receivedId: string;
}

/** A Workflow API call with the stack's workflow key; a failure throws with the answer. */
async function workflowData<T>(
  stack: BrowserStack,
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<T> {
  const response = await fetch(`${stack.file.workflow_url}${path}`, {
    method,
    headers: {
      'x-api-key': stack.file.api_keys.workflow_all,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      ...headers,
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (!response.ok) throw new Error(`${method} ${path}: ${response.status} ${await response.text()}`);
  return ((await response.json()) as { data: T }).data;
}

/** Invokes `intent` in the stack's project (a new idempotency key each time); the invocation's id. */
export async function invoke(stack: BrowserStack, intent: string): Promise<string> {
  const created = await workflowData<{ invocation_id: string }>(
    stack,
    'POST',
    `/api/v1/projects/${stack.file.project.id}/workflow/invocations`,
    { intent },
    { 'idempotency-key': `seed-${randomBytes(8).toString('hex')}` },
  );
  return created.invocation_id;
}

/** An invocation's state as the Workflow API answers it. */
export async function invocationState(stack: BrowserStack, id: string): Promise<string> {
  const inv = await workflowData<{ state: string }>(
    stack,
    'GET',
    `/api/v1/projects/${stack.file.project.id}/workflow/invocations/${id}`,
  );
  return inv.state;
}

/**
 * Through the Workflow API with the stack's key: an artifact schema, a contract whose two stages the
 * reference agent owns (`report`), one invocation run to completion and one left `received`.
 */
export async function seedWorkflow(stack: BrowserStack): Promise<SeededWorkflow> {
  const suffix = randomBytes(3).toString('hex');
  const project = stack.file.project.id;
  const schemaName = `release-note-${suffix}`;
  const contractName = `Release note ${suffix}`;
  const phrase = `release note ${suffix}`;
  await workflowData(stack, 'POST', `/api/v1/workspaces/${stack.file.workspace.id}/artifact-schemas`, {
    project_id: project,
    name: schemaName,
    version: '1.0.0',
    json_schema: {
      type: 'object',
      required: ['headline', 'notes'],
      additionalProperties: false,
      properties: {
        headline: { type: 'string', title: 'Headline', minLength: 1, maxLength: 120 },
        notes: { type: 'array', minItems: 1, maxItems: 5, items: { type: 'string', minLength: 1 } },
      },
    },
  });
  await workflowData(stack, 'POST', `/api/v1/projects/${project}/workflow/contracts`, {
    name: contractName,
    classifier: { intentContains: [phrase] },
    template: {
      key: `release-note-${suffix}`,
      version: '1.0.0',
      required_capabilities: ['report'],
      artifact_schema: { name: schemaName, version: '1.0.0' },
      guardrails: { human_approval_required: false },
      stages: [
        { key: 'gather', title: 'Gather the changes', required_capabilities: ['report'] },
        { key: 'write', title: 'Write the release note', required_capabilities: ['report'] },
      ],
    },
  });
  const completedId = await invoke(stack, `The ${phrase} for this week`);
  await workflowData(stack, 'POST', `/api/v1/projects/${project}/workflow/invocations/${completedId}/launch`);
  await eventually(
    async () => (await invocationState(stack, completedId)) === 'completed',
    120_000,
    'the seeded run to complete',
  );
  const receivedId = await invoke(stack, `The ${phrase} for next week`);
  return { schemaName, contractName, phrase, completedId, receivedId };
}
