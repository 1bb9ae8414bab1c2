// A partner's program, written only against the installed @svc/sdk package under strict TypeScript. The
// package test copies it into a project outside the workspace as main.mts (ES module) and main.cts
// (CommonJS), type-checks it under `nodenext` and `bundler` resolution, and runs both builds against a real
// stack: a delivery receiver, an agent written with the SDK, the five steps, run(), errors and pagination.
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  NotFoundError,
  RunAttentionError,
  ValidationError,
  USER_AGENT,
  verifyEnvelope,
  Webhook,
  Workflow,
  WorkflowAgent,
} from '@svc/sdk';
import type { Invocation, StageAssignment, WebhookDelivery } from '@svc/sdk';

function env(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
}

const REPORT = { title: 'Weekly', summary: 'All good.', items: [{ name: 'uptime', score: 99 }] };

/** The agent: waits for stages, claims, keeps them alive, reports evidence, publishes the final artifact. */
async function serveStages(agent: WorkflowAgent, signal: AbortSignal, handled: string[]): Promise<void> {
  while (!signal.aborted) {
    let stage: StageAssignment;
    try {
      stage = await agent.waitForStage({ timeoutMs: 5_000, signal });
    } catch (error) {
      if (signal.aborted) return;
      if (error instanceof Error && error.name === 'WaitTimeoutError') continue;
      throw error;
    }
    await agent.claim(stage.stage_id);
    const alive = agent.keepAlive(stage, 1_000);
    try {
      await agent.heartbeat(stage.stage_id, 'writing the report');
      await agent.report(stage.stage_id, { kind: 'notes', content: { intent: stage.intent } });
      if (stage.is_final)
        await agent.publish(stage, { payload: REPORT, summary: 'Written by the SDK agent.' });
      await agent.complete(stage.stage_id, 'done');
      handled.push(stage.invocation_id);
    } finally {
      alive.stop();
    }
  }
}

async function main(): Promise<void> {
  const projectId = env('PROJECT_ID');
  const mode = env('MODE');
  const workflow = new Workflow({
    baseUrl: env('WORKFLOW_URL'),
    apiKey: env('SVC_API_KEY'),
    projectId,
    workspaceId: env('WORKSPACE_ID'),
    timeoutMs: 20_000,
  });

  // A receiver of signed deliveries.
  const deliveries: WebhookDelivery[] = [];
  const about = (d: WebhookDelivery, invocationId: string) =>
    d.event.type !== 'delivery_subscription.test' && d.event.data.invocation_id === invocationId;
  const receiver: { webhook?: Webhook } = {};
  let rejected = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (!receiver.webhook) return void res.writeHead(503).end();
      receiver.webhook.verify(Buffer.concat(chunks), req.headers).then(
        (delivery) => {
          if (!delivery.duplicate) deliveries.push(delivery);
          res.writeHead(204).end();
        },
        () => {
          rejected += 1;
          res.writeHead(400).end();
        },
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  const subscription = await workflow.subscriptions.create({
    url: `http://127.0.0.1:${port}/deliveries`,
    events: ['invocation.completed'],
  });
  receiver.webhook = new Webhook(subscription.signing_secret);

  // The agent, with its own token.
  const agent = new WorkflowAgent({
    baseUrl: env('WORKFLOW_URL'),
    hubUrl: env('HUB_URL'),
    token: env('AGENT_TOKEN'),
  });
  const presence = await agent.stayPresent(5_000);
  const stop = new AbortController();
  const handled: string[] = [];
  const agentLoop = serveStages(agent, stop.signal, handled);

  try {
    // The five steps.
    const intent = env('INTENT');
    const resolution = await workflow.contracts.resolve({ intent });
    const preflight = await workflow.invocations.preflight({ intent });
    const key = `${mode}-${Date.now()}`;
    const created = await workflow.invocations.create(
      { intent },
      { idempotencyKey: key, correlationId: mode },
    );
    const again = await workflow.invocations.create({ intent }, { idempotencyKey: key, correlationId: mode });
    const invocationId = created.invocation.invocation_id;
    const launched = await workflow.invocations.launchWithReport(invocationId);
    const states: Invocation['state'][] = [];
    const consumed = await workflow.invocations.waitForArtifact(invocationId, {
      timeoutMs: 120_000,
      onState: (invocation) => states.push(invocation.state),
    });
    const envelope = await verifyEnvelope(consumed.envelope, {
      projectId,
      invocationId,
      schema: { name: env('SCHEMA_NAME'), versions: ['1.0.0'] },
    });

    // run(): the same in one call, here served by the SDK agent.
    const run = await workflow.run(env('AGENT_INTENT'), { timeoutMs: 120_000 });

    // run() fails fast on a run awaiting approval.
    let attention: string | undefined;
    try {
      await workflow.run(env('APPROVAL_INTENT'), { timeoutMs: 120_000 });
    } catch (error) {
      if (error instanceof RunAttentionError) attention = error.attention;
      else throw error;
    }

    // A contract created with only what the server does not default (priority, fallback, is_active omitted),
    // inactive afterwards so it never competes with the routes above.
    const contract = await workflow.contracts.create({
      name: `Partner ${mode}`,
      classifier: { intentContains: [`partner contract ${mode}`] },
      template: {
        key: `partner-${mode}`,
        version: '1.0.0',
        required_capabilities: [],
        artifact_schema: { name: env('SCHEMA_NAME'), version: '1.0.0' },
        guardrails: { human_approval_required: false },
      },
    });
    const deactivated = await workflow.contracts.update(contract.contract_id, { is_active: false });
    const contracts: string[] = [];
    for await (const item of workflow.contracts.list({ include_inactive: true, limit: 1 }))
      contracts.push(item.contract_id);

    // Typed errors.
    let notFound: { code: string; status: number; requestId: string | undefined } | undefined;
    try {
      await workflow.invocations.get('inv_doesnotexist');
    } catch (error) {
      if (error instanceof NotFoundError)
        notFound = { code: error.code, status: error.status, requestId: error.request_id };
      else throw error;
    }
    let invalid: { code: string; details: number } | undefined;
    try {
      await workflow.invocations.create({ intent: '' });
    } catch (error) {
      if (error instanceof ValidationError) invalid = { code: error.code, details: error.details.length };
      else throw error;
    }

    // Auto-pagination, one invocation per page.
    const listed: string[] = [];
    for await (const item of workflow.invocations.list({ limit: 1 })) listed.push(item.invocation_id);
    const firstPage = await workflow.invocations.list({ limit: 1 });

    // The delivery of the first invocation's completion.
    const deadline = Date.now() + 60_000;
    while (!deliveries.some((d) => about(d, invocationId)) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    const delivered = deliveries.find((d) => about(d, invocationId))?.event;

    console.log(
      JSON.stringify({
        userAgent: USER_AGENT,
        resolved: resolution.matched,
        preflight: preflight.can_launch,
        preflightBlockers: preflight.blockers.map((b) => `${b.effect}:${b.code}`),
        created: created.replayed,
        replayed: again.replayed,
        sameInvocation: again.invocation.invocation_id === invocationId,
        launch: launched.launch.outcome,
        launchBlockers: launched.launch.blockers.map((b) => `${b.effect}:${b.code}`),
        states,
        state: consumed.invocation.state,
        payload: envelope.payload,
        run: {
          state: run.invocation.state,
          payload: run.payload,
          byAgent: handled.includes(run.invocation.invocation_id),
        },
        attention,
        contract: {
          priority: contract.priority,
          fallback: contract.fallback,
          active: contract.is_active,
          deactivated: !deactivated.is_active,
          listed: contracts.includes(contract.contract_id),
        },
        notFound,
        invalid,
        listed: listed.length,
        listedIncludes: listed.includes(invocationId) && listed.includes(run.invocation.invocation_id),
        firstPage: { size: firstPage.data.length, hasNext: firstPage.hasNextPage() },
        delivery:
          delivered && delivered.type !== 'delivery_subscription.test'
            ? { type: delivered.type, state: delivered.data.state }
            : null,
        rejectedDeliveries: rejected,
      }),
    );
  } finally {
    stop.abort();
    presence.stop();
    await agentLoop.catch(() => undefined);
    server.close();
  }
}

main().catch((error: unknown) => {
  const e = error instanceof Error ? error : new Error(String(error));
  console.error(JSON.stringify({ error: e.name, message: e.message, code: (e as { code?: unknown }).code }));
  process.exit(1);
});
