/**
 * The demo: sets up what the route needs (idempotently), starts the reference agent, then runs the five
 * steps — Resolve, Preflight, Invoke, Launch, Consume — through the SDK and prints each one.
 */
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import path from 'node:path';
import {
  APIError,
  EnvelopeVerificationError,
  RunFailedError,
  verifyEnvelope,
  WaitTimeoutError,
  Workflow,
} from '@svc/sdk';
import type { Invocation } from '@svc/sdk';
import { AgentProcess } from './agent-process';
import {
  agentLabel,
  assistanceRows,
  createStyle,
  explainWinner,
  firstLine,
  formatBlockers,
  formatJson,
  formatMs,
  formatRows,
  formatStageTable,
  formatStateLine,
  yesNo,
} from './format';
import type { Style } from './format';
import { HubSession } from './hub-session';
import {
  asDemoError,
  ensureAgent,
  ensureArtifactSchema,
  ensureContract,
  ensureRuntimeHost,
  HostHeartbeat,
  SCHEMA_NAME,
  SCHEMA_VERSION,
  startAgentAtHub,
  step,
  waitForAgentHeartbeat,
} from './setup';
import { checkStackReady, DemoError, readStackFile } from './stack-file';
import type { StackFile } from './stack-file';

/** Wide enough for every label the demo prints ("artifact schema", "idempotency key"). */
const LABEL_WIDTH = 15;

export const DEFAULT_INTENT = 'Write the weekly status report for the platform team';

export interface DemoOptions {
  repoRoot: string;
  /** Path of `dev-stack.json`. */
  stackFile: string;
  intent?: string;
  /** How long Consume waits for the artifact. */
  timeoutMs: number;
  colour: boolean;
  /** Print the reference agent's own log lines. */
  verbose: boolean;
  /** Aborted on Ctrl-C. */
  signal?: AbortSignal;
  write: (line: string) => void;
}

class Printer {
  constructor(
    private readonly write: (line: string) => void,
    readonly style: Style,
  ) {}

  line(text = ''): void {
    this.write(text);
  }

  lines(lines: string[]): void {
    for (const line of lines) this.write(line);
  }

  section(number: string, title: string, note?: string): void {
    this.write('');
    this.write(
      `${this.style.bold(`${number}${number ? '  ' : ''}${title}`)}${note ? `   ${this.style.dim(note)}` : ''}`,
    );
  }

  /** Rows of one section; labels share one width so rows printed as work progresses line up. */
  rows(rows: [string, string][]): void {
    this.lines(formatRows(rows, 4, LABEL_WIDTH));
  }
}

interface Prepared {
  stack: StackFile;
  session: HubSession;
  wf: Workflow;
  heartbeat: HostHeartbeat;
  agent: AgentProcess;
  agentNames: Map<string, string>;
}

function created(isNew: boolean): string {
  return isNew ? 'created' : 'reused';
}

/** Runs the whole demo; throws {@link DemoError} (one line) on any failure. Stops the agent it started. */
export async function runDemo(options: DemoOptions): Promise<void> {
  const out = new Printer(options.write, createStyle(options.colour));
  const started = Date.now();
  let prepared: Partial<Prepared> = {};
  try {
    prepared = await prepare(options, out, prepared);
    const artifactId = await runSteps(options, out, prepared as Prepared);
    const code = await prepared.agent!.stop();
    prepared.agent = undefined;
    out.line('');
    out.line(
      out.style.good(
        `Done in ${((Date.now() - started) / 1000).toFixed(1)} s: artifact ${artifactId} consumed.`,
      ) + ` Reference agent stopped (exit ${code}).`,
    );
  } finally {
    prepared.heartbeat?.stop();
    if (prepared.agent) await prepared.agent.stop();
  }
}

async function prepare(options: DemoOptions, out: Printer, prepared: Partial<Prepared>): Promise<Prepared> {
  const { style } = out;
  const stack = readStackFile(options.stackFile);
  await checkStackReady(stack);
  const agentScript = path.join(options.repoRoot, 'apps', 'reference-agent', 'dist', 'main.js');
  if (!existsSync(agentScript)) {
    throw new DemoError(
      `the reference agent is not built (${agentScript} is missing): run \`pnpm run build\``,
    );
  }
  const session = new HubSession(stack);
  await step('checking the participant token', () => session.ensure());
  const wf = new Workflow({
    baseUrl: stack.workflow_url,
    apiKey: stack.api_keys.workflow_all,
    projectId: stack.project.id,
  });

  out.line(style.bold('svc demo — Resolve, Preflight, Invoke, Launch, Consume'));
  out.lines(
    formatRows(
      [
        ['workspace', `${stack.workspace.slug} (${stack.workspace.id})`],
        ['project', `${stack.project.code} (${stack.project.id})`],
        ['hub', stack.hub_url],
        ['workflow', stack.workflow_url],
        [
          'participant',
          `${stack.participant.email}${session.refreshed ? ' (token expired; signed in again)' : ''}`,
        ],
      ],
      2,
    ),
  );

  out.section('', 'Setup', 'idempotent: everything is reused when it exists');
  const workdirRoot = path.join(path.dirname(path.resolve(options.stackFile)), 'agents');
  const host = await step('registering the runtime host', () =>
    ensureRuntimeHost(session, stack, workdirRoot),
  );
  const heartbeat = new HostHeartbeat(stack, host.host.id);
  prepared.heartbeat = heartbeat;
  const beat = await step('sending the runtime host heartbeat', () => heartbeat.beat());
  heartbeat.start();
  const readiness = beat.readiness;
  const hostState =
    readiness.spawn_ready && readiness.console_router_ready
      ? style.good('ready')
      : style.warn(`not ready: ${readiness.reasons.join('; ') || 'unknown'}`);
  out.rows([
    [
      'runtime host',
      `${host.host.name} (${host.host.id}) ${created(host.created)}, heartbeat sent, ${hostState}`,
    ],
  ]);

  const ensured = await step('registering the agent', () => ensureAgent(session, stack, host.host.id));
  const atHub = await step('starting the agent at the hub', () => startAgentAtHub(session, ensured.agent.id));
  const agentNames = new Map([[atHub.agent.id, atHub.agent.name]]);
  out.rows([
    [
      'agent',
      `${atHub.agent.name} (${atHub.agent.id}) ${created(ensured.created)}, capabilities ${atHub.agent.capabilities.join(', ')}, model ${atHub.agent.model ?? '-'}`,
    ],
    ...(ensured.skipped.length > 0
      ? ([['', `passed over: ${ensured.skipped.join('; ')}`]] as [string, string][])
      : []),
    ['', `started at the hub${atHub.restarted ? ' (it was still running there: stopped first)' : ''}`],
  ]);

  options.signal?.throwIfAborted();
  const agent = new AgentProcess({
    script: agentScript,
    env: {
      AGENT_TOKEN: atHub.token,
      HUB_URL: stack.hub_url,
      WORKFLOW_URL: stack.workflow_url,
      LOG_LEVEL: options.verbose ? 'info' : 'warn',
    },
    ...(options.verbose ? { onLine: (line: string) => out.line(style.dim(`    [agent] ${line}`)) } : {}),
  });
  prepared.agent = agent;
  process.once('exit', () => agent.kill());
  const spawnedAt = Date.now();
  await step('waiting for the reference agent', () =>
    waitForAgentHeartbeat(session, atHub.agent.id, atHub.agent.last_heartbeat_at, {
      timeoutMs: 20_000,
      exited: () => agent.exitCode,
      lastLine: () => agent.lastLine(),
      ...(options.signal ? { signal: options.signal } : {}),
    }),
  );
  out.rows([
    ['agent process', `pid ${agent.pid}, first heartbeat after ${formatMs(Date.now() - spawnedAt)}`],
  ]);

  const schema = await step('registering the artifact schema', () => ensureArtifactSchema(wf, stack));
  out.rows([
    [
      'artifact schema',
      `${SCHEMA_NAME}@${SCHEMA_VERSION} (${schema.schemaId}) ${schema.created ? 'registered' : 'already registered (same schema: 200)'}${schema.deprecatedAt ? style.warn(`, deprecated since ${schema.deprecatedAt}`) : ''}`,
    ],
  ]);
  const contract = await step('creating the contract', () => ensureContract(wf, stack));
  const c = contract.contract;
  out.rows([
    ['contract', `${c.name} (${c.contract_id}) ${created(contract.created)}, revision ${c.revision}`],
    ['', `matches intents containing ${c.classifier.intentContains.map((p) => `"${p}"`).join(', ') || '-'}`],
    [
      '',
      `template ${c.template.key}@${c.template.version}: ${c.template.stages.map((s) => `${s.key} [${s.required_capabilities.join(', ')}]`).join(' → ')}`,
    ],
  ]);
  return { stack, session, wf, heartbeat, agent, agentNames };
}

async function runSteps(options: DemoOptions, out: Printer, p: Prepared): Promise<string> {
  const { style } = out;
  const { stack, wf } = p;
  const projectId = stack.project.id;
  const intent = options.intent ?? DEFAULT_INTENT;

  // 1. Resolve
  out.section('1', 'Resolve', 'deterministic contract match with its explanation; creates nothing');
  const resolved = await step('resolve', () => wf.contracts.resolve({ intent }));
  const why = explainWinner(resolved.explanation);
  out.rows([
    ['intent', `"${intent}"`],
    ['normalized', why.normalizedIntent !== null ? `"${why.normalizedIntent}"` : '-'],
    ['matched', yesNo(resolved.matched, style)],
    [
      'contract',
      resolved.contract
        ? `${resolved.contract.name} (${resolved.contract.contract_id}), priority ${resolved.contract.priority}`
        : '-',
    ],
    [
      'template',
      resolved.template
        ? `${resolved.template.key}@${resolved.template.version}, stages ${resolved.template.definition.stages.map((s) => s.key).join(' → ')}`
        : '-',
    ],
    ['why it won', `${why.reason ?? '-'}${why.rule ? style.dim(`  (rule: ${why.rule})`) : ''}`],
    [
      'considered',
      `${why.candidates} candidate(s) listed, ${why.unlisted} unlisted${why.activeContracts !== null ? `, of ${why.activeContracts} active contract(s)` : ''}`,
    ],
  ]);
  const assisted = assistanceRows(resolved.explanation.assistance, style);
  if (assisted.length > 0) out.rows(assisted);
  if (!resolved.matched) {
    const suggestion = resolved.explanation.assistance?.suggestion;
    throw new DemoError(
      `resolve: no contract matched "${intent}"` +
        (suggestion ? ` (the project's model suggested ${suggestion.name}, ${suggestion.contract_id})` : ''),
    );
  }
  options.signal?.throwIfAborted();

  // 2. Preflight
  out.section('2', 'Preflight', 'launch readiness with typed blockers; creates nothing');
  const preflight = await step('preflight', () => wf.invocations.preflight({ intent }));
  out.rows([
    ['route ready', yesNo(preflight.route_ready, style)],
    ['can launch', yesNo(preflight.can_launch, style)],
    ['blockers', preflight.blockers.length === 0 ? style.good('none') : formatBlockers(preflight.blockers)],
  ]);
  if (!preflight.can_launch) {
    throw new DemoError(`preflight: the route cannot launch (${preflight.blockers.length} blocker(s) above)`);
  }
  options.signal?.throwIfAborted();

  // 3. Invoke
  out.section('3', 'Invoke', 'one invocation per Idempotency-Key; a retry with the same key replays it');
  const idempotencyKey = `svc-demo-${randomUUID()}`;
  const body = { intent, metadata: { source: 'svc-demo' } };
  const keys = { idempotencyKey, correlationId: idempotencyKey };
  const first = await step('invoke', () => wf.invocations.create(body, keys));
  const retry = await step('invoke (retry with the same key)', () => wf.invocations.create(body, keys));
  const invocation = first.invocation;
  const invocationId = invocation.invocation_id;
  const sameInvocation = retry.invocation.invocation_id === invocationId;
  out.rows([
    ['invocation', `${invocationId}, state ${invocation.state}, attention ${invocation.attention}`],
    ['replayed', `${yesNo(first.replayed, style)} (first call)`],
    [
      'retry',
      `same key again → replayed ${yesNo(retry.replayed, style)}, ${sameInvocation ? 'same invocation' : style.bad(`another invocation ${retry.invocation.invocation_id}`)}`,
    ],
    [
      'route',
      `${invocation.route.selection}: contract ${invocation.route.contract_id ?? '-'}, template ${invocation.route.template_key ?? '-'}@${invocation.route.template_version ?? '-'}`,
    ],
    ['idempotency key', idempotencyKey],
  ]);
  if (!sameInvocation || !retry.replayed) {
    throw new DemoError(
      'invoke: retrying with the same Idempotency-Key did not replay the original invocation',
    );
  }
  options.signal?.throwIfAborted();

  // 4. Launch
  out.section('4', 'Launch', 'starts the governed run; the worker assigns the stages');
  let launched: Invocation;
  try {
    launched = await wf.invocations.launch(invocationId);
  } catch (error) {
    if (error instanceof APIError && error.code === 'launch_blocked') {
      out.rows([['blockers', formatBlockers(error.blockers)]]);
      throw new DemoError(`launch: refused (launch_blocked) — ${error.message}`);
    }
    throw asDemoError('launch', error);
  }
  out.rows([['state', `${launched.state}, attention ${launched.attention}`]]);

  // 5. Consume
  const timeoutS = Number((options.timeoutMs / 1000).toFixed(1));
  out.section('5', 'Consume', `waitForArtifact (up to ${timeoutS} s), then verifyEnvelope`);
  const waitStarted = Date.now();
  const abort = new AbortController();
  const onOuterAbort = () => abort.abort(options.signal?.reason);
  options.signal?.addEventListener('abort', onOuterAbort, { once: true });
  const agentGone = p.agent.exited.then((code) => {
    const last = p.agent.lastLine();
    const error = new DemoError(
      `consume: the reference agent exited (${code}) during the run${last ? `: ${last}` : ''}`,
    );
    abort.abort(error);
    throw error;
  });
  agentGone.catch(() => undefined);
  let result;
  try {
    result = await Promise.race([
      wf.invocations.waitForArtifact(invocationId, {
        timeoutMs: options.timeoutMs,
        signal: abort.signal,
        // As the demo has always done: a run that needs attention is waited on until the timeout.
        waitFor: 'all',
        onState: (inv) => out.line(`  ${formatStateLine(inv, Date.now() - waitStarted, p.agentNames)}`),
      }),
      agentGone,
    ]);
  } catch (error) {
    if (error instanceof DemoError) throw error;
    if (abort.signal.aborted && abort.signal.reason instanceof Error) throw abort.signal.reason;
    if (error instanceof WaitTimeoutError) {
      const stalled = p.heartbeat.lastError
        ? ` (runtime host heartbeat failing: ${p.heartbeat.lastError})`
        : '';
      throw new DemoError(`consume: ${error.message}${stalled}`);
    }
    if (error instanceof RunFailedError) throw new DemoError(`consume: ${error.message}`);
    throw asDemoError('consume', error);
  } finally {
    options.signal?.removeEventListener('abort', onOuterAbort);
  }
  const done = result.invocation;

  out.line('');
  out.line(`    ${style.bold('Stage timeline')}`);
  out.lines(formatStageTable(done.stages, p.agentNames, 4));

  let envelope;
  try {
    envelope = await verifyEnvelope(result.envelope, {
      projectId,
      invocationId,
      workspaceId: stack.workspace.id,
      ...(done.run_id ? { runId: done.run_id } : {}),
      ...(done.artifact ? { artifactId: done.artifact.artifact_id } : {}),
      schema: { name: SCHEMA_NAME, versions: [SCHEMA_VERSION] },
    });
  } catch (error) {
    if (error instanceof EnvelopeVerificationError) {
      throw new DemoError(
        `consume: the artifact envelope failed verification (${error.code}): ${error.message}`,
      );
    }
    throw error;
  }

  out.line('');
  out.line(`    ${style.bold('Artifact')}`);
  out.rows([
    [
      'verified',
      `${style.good('yes')} — identities match (workspace, project, invocation, run, artifact), schema supported, payload matches payload_sha256`,
    ],
    ['id', envelope.artifact_id],
    ['schema', `${envelope.schema.name}@${envelope.schema.version} (${envelope.schema.schema_id})`],
    ['run', envelope.run_id],
    ['created by', `${envelope.created_by.kind} ${agentLabel(envelope.created_by.id, p.agentNames)}`],
    ['summary', envelope.summary || '-'],
    [
      'limitations',
      envelope.limitations.length > 0 ? envelope.limitations.map(firstLine).join('\n') : 'none',
    ],
    ['payload', ''],
  ]);
  out.lines(formatJson(envelope.payload, 6));
  return envelope.artifact_id;
}
