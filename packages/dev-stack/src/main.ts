#!/usr/bin/env node
import path from 'node:path';
import { PreflightError } from './preflight';
import { startStack } from './stack';

const env = process.env;
const repoRoot = path.resolve(__dirname, '..', '..', '..');
const port = (name: string, fallback: number) => Number(env[name] ?? fallback);
/**
 * Once stdout or stderr fails (its terminal closed, the pipe's reader gone), nothing more is written there and
 * the stack stops as on SIGHUP; a write that failed again and again would only spin.
 */
const open = { stdout: true, stderr: true };
let onOutputGone: () => void = () => undefined;
for (const name of ['stdout', 'stderr'] as const) {
  process[name].on('error', () => {
    if (!open[name]) return;
    open[name] = false;
    onOutputGone();
  });
}
const writeTo = (name: 'stdout' | 'stderr', line: string) => {
  if (!open[name]) return;
  try {
    process[name].write(`${line}\n`);
  } catch {
    open[name] = false;
    onOutputGone();
  }
};
const write = (line: string) => writeTo('stdout', line);

/** `--replicas N` (or `SVC_DEV_REPLICAS`): replicas of the hub, the Workflow API and the worker, behind HAProxy. */
function replicasArgument(): number {
  const usage = 'usage: pnpm start [--replicas N]  (N from 1 to 8)';
  let raw = env.SVC_DEV_REPLICAS ?? '1';
  const args = process.argv.slice(2).filter((a) => a !== '--');
  for (let i = 0; i < args.length; i += 1) {
    const arg = args[i]!;
    if (arg.startsWith('--replicas=')) raw = arg.slice('--replicas='.length);
    else if (arg === '--replicas' && i + 1 < args.length) raw = args[(i += 1)]!;
    else throw new PreflightError(usage);
  }
  const count = Number(raw);
  if (!/^\d+$/.test(raw) || count < 1 || count > 8)
    throw new PreflightError(
      `--replicas must be a whole number from 1 to 8 (got ${JSON.stringify(raw)}); ${usage}`,
    );
  return count;
}

async function main(): Promise<void> {
  const replicas = replicasArgument();
  const stack = await startStack({
    repoRoot,
    stateDir: env.SVC_DEV_STATE_DIR ?? path.join(repoRoot, '.svc'),
    // A server URL; a database path in it is ignored (each service gets its own database).
    databaseServerUrl: env.DATABASE_URL ?? 'postgresql://postgres@127.0.0.1:5432',
    redisUrl: env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    hubDatabase: env.SVC_DEV_HUB_DATABASE ?? 'svc_hub',
    workflowDatabase: env.SVC_DEV_WORKFLOW_DATABASE ?? 'svc_workflow',
    ports: {
      hub: port('HUB_PORT', 4000),
      workflow: port('WORKFLOW_PORT', 4100),
      worker: port('WORKFLOW_WORKER_PORT', 4101),
      relay: port('RELAY_PORT', 8787),
      consoleRouter: port('CONSOLE_ROUTER_PORT', 8790),
      controlWeb: port('CONTROL_WEB_PORT', 4200),
    },
    workspaceSlug: env.SVC_DEV_WORKSPACE ?? 'dev',
    projectCode: env.SVC_DEV_PROJECT ?? 'DEMO',
    adminEmail: env.SVC_DEV_ADMIN_EMAIL ?? 'admin@dev.svc.local',
    queuePrefix: env.SVC_DEV_QUEUE_PREFIX ?? 'svcdev',
    agentServePort: port('SVC_DEV_AGENT_SERVE_PORT', 4341),
    replicas,
    rawLogs: env.SVC_DEV_RAW_LOGS === '1',
    write,
  });
  const f = stack.file;
  write('');
  write('[dev-stack]        ready — every service answers /readyz');
  const behind = replicas > 1 ? ` (haproxy in front of ${replicas} replicas)` : '';
  write(`[dev-stack]        hub-api          ${f.hub_url}${behind}`);
  write(`[dev-stack]        workflow-api     ${f.workflow_url}${behind}`);
  write(`[dev-stack]        relay            ${f.relay_url}`);
  write(`[dev-stack]        console-router   ${f.console_router_url}`);
  write(`[dev-stack]        console agent    ${f.agent.console_url} (${f.agent.name})`);
  write(`[dev-stack]        control web      ${f.control_web_url} (sign in as ${f.participant.email})`);
  write(
    `[dev-stack]        workspace ${f.workspace.slug} (${f.workspace.id}), project ${f.project.code} (${f.project.id})`,
  );
  write(
    `[dev-stack]        credentials in ${path.relative(process.cwd(), path.join(env.SVC_DEV_STATE_DIR ?? path.join(repoRoot, '.svc'), 'dev-stack.json')) || 'dev-stack.json'} — Ctrl-C stops everything`,
  );
  write('');

  let stopping = false;
  const stop = async (code: number) => {
    if (stopping) return;
    stopping = true;
    write('[dev-stack]        stopping');
    const codes = await stack.stop();
    const unclean = Object.entries(codes).filter(([, c]) => c !== 0);
    write(
      unclean.length === 0
        ? '[dev-stack]        stopped; every service exited cleanly'
        : `[dev-stack]        stopped; not clean: ${unclean.map(([n, c]) => `${n}=${c}`).join(', ')}`,
    );
    process.exit(unclean.length === 0 ? code : 1);
  };
  // SIGHUP and a failed write: the terminal went away (the services run in process groups of their own, so
  // only the launcher hears it) — every service is stopped as on Ctrl-C.
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => void stop(0));
  onOutputGone = () => void stop(0);
  if (!open.stdout || !open.stderr) void stop(0);
  const failure = await stack.failed;
  if (stopping) return;
  writeTo('stderr', `dev-stack: ${failure}; stopping the others`);
  await stop(1);
}

main().catch((error: unknown) => {
  const message = error instanceof PreflightError ? error.message : `dev-stack: ${(error as Error).message}`;
  writeTo('stderr', message.split('\n')[0]!);
  process.exit(1);
});
