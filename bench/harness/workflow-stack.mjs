// The stack the run benches drive end to end: fresh hub and workflow databases, the hub, the Workflow API and
// its worker from their builds under a queue prefix of their own, and the one route every run takes (an
// artifact schema and a contract whose template has one stage). Not a bench itself.
import { testing } from './cli.mjs';
import { redisUrl } from './stack.mjs';

/** The capability of the route's one stage: the agents that work it declare it. */
export const REPORT_CAPABILITY = 'report';

/** Fresh, migrated hub and workflow databases, dropped at tear-down. */
export async function createBenchDatabases(teardown) {
  const [hubDb, wfDb] = await Promise.all([
    testing().createHubDatabase('svc_hub_bench'),
    testing().createWorkflowDatabase('svc_workflow_bench'),
  ]);
  teardown.push(() => Promise.all([hubDb.drop(), wfDb.drop()]));
  return { hubDb, wfDb };
}

/**
 * The hub, the Workflow API and its worker over `databases`, the last two under `queuePrefix` (its `queues`
 * obliterated at tear-down). Each process is named by `names` (`hub`, `api`, `worker`), started with
 * `process` options besides and tracked by `teardown` with what it writes counted.
 */
export async function startWorkflowStack(teardown, options) {
  const { databases, queuePrefix, queues, names, hubEnv, workflowEnv, process = {} } = options;
  const harness = testing();
  teardown.push(() => harness.obliterateQueues(redisUrl, queuePrefix, queues));
  const serviceToken = harness.newServiceToken();
  const hubOptions = teardown.logged(names.hub, process);
  const hub = await harness.startHub({
    databaseUrl: databases.hubDb.url,
    serviceToken,
    env: hubEnv,
    process: hubOptions,
  });
  teardown.track(hub.process, hubOptions);
  const wf = await harness.workflowEnv({
    databaseUrl: databases.wfDb.url,
    redisUrl,
    queuePrefix,
    hubUrl: hub.url,
    serviceToken,
    env: workflowEnv,
  });
  const [apiOptions, workerOptions] = [
    teardown.logged(names.api, process),
    teardown.logged(names.worker, process),
  ];
  const [api, worker] = await Promise.all([
    harness.startWorkflowApi(wf, apiOptions).then((proc) => teardown.track(proc, apiOptions)),
    harness.startWorkflowWorker(wf, workerOptions).then((proc) => teardown.track(proc, workerOptions)),
  ]);
  return { hub, wf, api, worker };
}

/**
 * The route through the Workflow API at `wfUrl`: an artifact schema `<name>` 1.0.0 and the contract `Weekly
 * report` (classifier `weekly report`) whose template `<name>-flow` has one stage needing
 * {@link REPORT_CAPABILITY}. `post(step, url, body)` is the bench's own request (it throws unless created).
 * Resolves to the contract as created.
 */
export async function createReportRoute(post, { wfUrl, workspaceId, projectId, name }) {
  await post('register artifact schema', `${wfUrl}/api/v1/workspaces/${workspaceId}/artifact-schemas`, {
    project_id: projectId,
    name,
    version: '1.0.0',
    json_schema: testing().REPORT_SCHEMA,
  });
  return post('create contract', `${wfUrl}/api/v1/projects/${projectId}/workflow/contracts`, {
    name: 'Weekly report',
    priority: 10,
    fallback: false,
    is_active: true,
    classifier: { intentContains: ['weekly report'] },
    template: {
      key: `${name}-flow`,
      version: '1.0.0',
      required_capabilities: [],
      artifact_schema: { name, version: '1.0.0' },
      guardrails: { human_approval_required: false },
      stages: [{ key: 'write', title: 'Write the report', required_capabilities: [REPORT_CAPABILITY] }],
    },
  });
}

/**
 * The run path with `hubs` hubs, `apis` Workflow APIs and `workers` workers (the harness's `startRunStack`:
 * HAProxy in front of the hubs and the Workflow APIs as soon as one count is above one), every service at its
 * own defaults plus `env` (the Workflow API and worker), `hubEnv` and `agentEnv`, started with `process`
 * options; `agents` reference agents with {@link REPORT_CAPABILITY} and the one-stage route for `intent`.
 * Its `close` is registered with `teardown` and may be called before (once, whoever asks first). Resolves
 * to the stack, its agents, every process by service (`processes`, for a cost meter), each service's
 * `/metrics` URLs, its database URLs and the invocations URL and key header of the project.
 */
export async function startReplicatedRunStack(teardown, options) {
  const {
    hubs,
    apis,
    workers,
    balancer,
    agents: agentCount,
    intent,
    env,
    hubEnv,
    agentEnv,
    process = {},
  } = options;
  let closing;
  let stack;
  const close = () => (closing ??= stack ? stack.close() : Promise.resolve());
  teardown.push(close);
  stack = await testing().startRunStack({
    hubs,
    apis,
    workers,
    balancer,
    serviceDefaults: true,
    env,
    hubEnv,
    agentEnv,
    process,
  });
  const agents = [];
  for (let i = 0; i < agentCount; i += 1) agents.push(await stack.addAgent([REPORT_CAPABILITY]));
  await stack.seedRoute({
    intent,
    stages: [{ key: 'write', title: 'Write the report', required_capabilities: [REPORT_CAPABILITY] }],
  });
  const { replicas, loadBalancer } = stack;
  const pids = (list) => () => list.map((r) => r.process.child.pid);
  return {
    stack,
    close,
    agents,
    processes: {
      hub: pids(replicas.hub),
      'workflow API': pids(replicas.api),
      worker: pids(replicas.worker),
      agents: () => agents.map((agent) => agent.process.child.pid),
      haproxy: () => (loadBalancer?.pid ? [loadBalancer.pid] : []),
    },
    running: () => [...replicas.hub, ...replicas.api, ...replicas.worker].map((r) => r.process),
    metrics: {
      hub: replicas.hub.map((r) => `${r.url}/metrics`),
      'workflow API': replicas.api.map((r) => `${r.url}/metrics`),
      worker: replicas.worker.map((r) => `${r.url}/metrics`),
    },
    databases: stack.databaseUrls,
    /** What HAProxy wrote (servers taken out and put back), empty without it. */
    balancerOutput: () => loadBalancer?.output() ?? '',
    project: {
      invocations: `${stack.workflowUrl}/api/v1/projects/${stack.project.id}/workflow/invocations`,
      headers: { 'x-api-key': stack.apiKey },
    },
  };
}
