import { randomBytes } from 'node:crypto';
import { fc, test } from '@fast-check/jest';
import { workflowDocument } from '@svc/contracts';
import {
  checkAnswer,
  checkBodyRefusals,
  checkUnsupportedMethods,
  describeExchange,
  documentValidator,
  eventually,
  fuzzSettings,
  orderForFuzz,
  planOperations,
  recordAnswer,
  reportOrThrow,
  sendRequest,
  startRunStack,
} from '@svc/testing';
import type { FuzzTarget, RunStack } from '@svc/testing';
import { WORKFLOW_FUZZ_EXEMPTIONS } from './support/fuzz-exemptions';

/**
 * The Workflow API's document is the truth: for every operation, requests drawn from its schemas (fast-check
 * arbitraries derived from the document) go to the built Workflow API (with the built hub and worker) as
 * every actor the operation accepts, against seeded fixtures. Positive requests must not be refused except
 * by a rule the operation names; negative ones (broken in one place) must get 400; every answer must have
 * a documented status, a body valid against the documented schema, a problem `code` the operation names,
 * and never a 5xx. `SVC_FUZZ_RUNS` draws more requests, `SVC_FUZZ_SEED` replays a run, `SVC_FUZZ_REPORT`
 * collects every finding in a file instead of failing.
 */

const settings = fuzzSettings();
if (settings.seed !== undefined) fc.configureGlobal({ seed: settings.seed });
const ACTORS = ['anonymous', 'participant', 'api_key', 'agent'] as const;

/** Operations that end a fixture the others use: they run last. */
const ENDING = new Set([
  'deleteDeliverySubscription',
  'rotateDeliverySubscriptionSecret',
  'deprecateArtifactSchema',
  'cancelInvocation',
  'failWorkflowStage',
  'completeWorkflowStage',
]);

const plans = orderForFuzz(planOperations(workflowDocument, ACTORS), (p) =>
  ENDING.has(p.operation.operationId),
);
const validator = documentValidator(workflowDocument);
const target: FuzzTarget = {
  baseUrl: '',
  credentials: {},
  fixtures: {},
  exemptions: WORKFLOW_FUZZ_EXEMPTIONS,
};
let stack: RunStack | undefined;

async function call<T>(method: string, path: string, body?: unknown): Promise<T> {
  const res = await fetch(`${(stack as RunStack).workflowUrl}${path}`, {
    method,
    headers: {
      'x-api-key': (stack as RunStack).apiKey,
      'content-type': 'application/json',
      'idempotency-key': `fuzz-seed-${randomBytes(8).toString('hex')}`,
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const json = (await res.json()) as { data: T };
  if (!res.ok) throw new Error(`seeding ${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json.data;
}

beforeAll(async () => {
  // Signed delivery needs a key for its signing secrets; loopback endpoints let a subscription exist
  // without a resolvable public host (nothing listens there: deliveries fail and are retried).
  stack = await startRunStack({
    env: {
      WORKFLOW_ENCRYPTION_KEYS: `k1:${randomBytes(32).toString('base64')}`,
      WORKFLOW_DELIVERY_ALLOW_LOOPBACK: 'true',
      // The fuzzed stage stays with its agent for the whole run (it sends no heartbeats): the stage operations
      // must reach their body checks, not a reassignment.
      WORKFLOW_STAGE_STALL_SECONDS: '600',
    },
  });
  const project = stack.project.id;
  const route = await stack.seedRoute({
    stages: [{ key: 'build', title: 'Build', required_capabilities: ['code'] }],
  });
  const agent = await stack.addAgent(['code'], { start: false });
  const schemas = await call<{ id: string }[]>(
    'GET',
    `/api/v1/workspaces/${stack.workspace.id}/artifact-schemas`,
  );
  const subscription = await call<{ subscription_id: string }>(
    'POST',
    `/api/v1/projects/${project}/workflow/delivery-subscriptions`,
    { url: 'http://127.0.0.1:9/fuzz', events: ['invocation.completed'] },
  );
  const invocation = await call<{ invocation_id: string }>(
    'POST',
    `/api/v1/projects/${project}/workflow/invocations`,
    { intent: route.intent },
  );
  // A launched copy gets its stages (an owner from the roster when one is live, else waiting): their ids
  // let the stage actions reach their own checks instead of 404.
  const launched = await call<{ invocation_id: string }>(
    'POST',
    `/api/v1/projects/${project}/workflow/invocations`,
    {
      intent: `${route.intent} launched`,
    },
  );
  await call('POST', `/api/v1/projects/${project}/workflow/invocations/${launched.invocation_id}/launch`);
  const stages = await eventually(
    async () => {
      const { stages } = await call<{ stages: { stage_id: string }[] }>(
        'GET',
        `/api/v1/projects/${project}/workflow/invocations/${launched.invocation_id}`,
      );
      return stages.length > 0 && stages;
    },
    20_000,
    "the launched copy's stages",
  );
  Object.assign(target, {
    baseUrl: stack.workflowUrl,
    credentials: {
      anonymous: {},
      participant: { authorization: `Bearer ${stack.ownerToken}` },
      api_key: { 'x-api-key': stack.apiKey },
      agent: { authorization: `Bearer ${agent.token}` },
    },
    fixtures: {
      workspaceId: [stack.workspace.id],
      projectId: [project],
      schemaId: schemas.map((s) => s.id),
      contractId: [route.contractId],
      subscriptionId: [subscription.subscription_id],
      invocationId: [invocation.invocation_id, launched.invocation_id],
      stageId: stages.map((stage) => stage.stage_id),
    },
  });
}, 180_000);

afterAll(async () => {
  await stack?.close();
});

test('every path answers a method it lacks with 405 and an Allow listing its methods', async () => {
  expect(await checkUnsupportedMethods(workflowDocument, target)).toEqual([]);
});

test('every operation with a JSON body answers 415 to another media type and 413 over the limit, both documented', async () => {
  expect(await checkBodyRefusals(workflowDocument, target)).toEqual([]);
});

describe.each(plans.map((p) => [p.operation.operationId, p] as const))('%s', (_id, plan) => {
  const run = async (req: Parameters<typeof sendRequest>[2]) => {
    const answer = await sendRequest(target, plan.operation, req);
    recordAnswer(plan.operation.operationId, req.phase, answer);
    const findings = checkAnswer(workflowDocument, target, plan.operation, req, answer, validator);
    if (findings.length > 0)
      reportOrThrow(plan.operation.operationId, describeExchange(req, answer, findings));
  };
  test.prop([plan.positive], { numRuns: settings.numRuns, endOnFailure: true })('positive', run, 60_000);
  if (plan.negative) {
    test.prop([plan.negative], { numRuns: settings.numRuns, endOnFailure: true })('negative', run, 60_000);
  }
});
