/**
 * One file because the soak's traffic, its faults and its read-back share one stack, one tally of attempts and
 * one receiver, closed over here.
 *
 * The replicas soak (decision 94): partner traffic through the SDK — invokes and launches, run status reads, hub
 * reads and an agent console's health through the console routers — and signed deliveries to a receiver, while
 * one replica of each service (hub, Workflow API, worker, and console router when there are several) is killed
 * with SIGKILL in turn and started again. Every request goes through the built SDK (`@svc/sdk`) with its default
 * retry policy; a counting `fetch` under it sees each attempt.
 */
import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import path from 'node:path';
import { startConsoleRouters } from './console-routers';
import type { ConsoleRouters } from './console-routers';
import { freePort } from './process';
import { startRunStack } from './run-stack';
import type { RunStack } from './run-stack';
import { testRedisUrl } from './servers';

/** The routes whose availability the soak measures. */
export const SOAK_ROUTES = ['invoke', 'launch', 'run status', 'hub read', 'router health'] as const;
export type SoakRoute = (typeof SOAK_ROUTES)[number];

/** The part of the built SDK the soak uses (it is loaded from `packages/sdk/dist`: the SDK's tests use this package). */
interface SdkClientOptions {
  baseUrl: string;
  apiKey?: string;
  token?: string;
  projectId?: string;
  fetch?: (request: Request) => Promise<Response>;
}
interface SdkWorkflow {
  invocations: {
    create(body: { intent: string }): Promise<{ invocation: { invocation_id: string } }>;
    launch(invocationId: string): Promise<unknown>;
    get(invocationId: string): Promise<{ state: string }>;
  };
  subscriptions: {
    create(body: { url: string; events: string[] }): Promise<{ id: string; signing_secret: string }>;
  };
}
interface SdkHub {
  projects: { get(projectId: string): Promise<unknown> };
  raw: { GET(path: never, init?: unknown): Promise<{ response: Response; error?: unknown }> };
}
interface SdkWebhook {
  verify(
    body: string,
    headers: Readonly<Record<string, string | readonly string[] | undefined>>,
  ): Promise<{ id: string; duplicate: boolean; event: { type: string; data: { invocation_id: string } } }>;
}
interface Sdk {
  Workflow: new (options: SdkClientOptions) => SdkWorkflow;
  Hub: new (options: SdkClientOptions) => SdkHub;
  Webhook: new (secret: string) => SdkWebhook;
  SvcError: new (message: string, options?: { code?: string }) => Error;
}

/** The built SDK (CommonJS), as a partner installs it. */
export function loadBuiltSdk(): Sdk {
  const entry = path.resolve(__dirname, '..', '..', 'sdk', 'dist', 'cjs', 'index.js');
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  return require(entry) as Sdk;
}

export interface ReplicasSoakOptions {
  /** How long traffic runs while replicas are killed (default 3 min). */
  durationMs?: number;
  /** One run invoked and launched every this many ms (default 1 s). */
  runEveryMs?: number;
  /** Pause between two reads of one route, per reader (default 200 ms). */
  readEveryMs?: number;
  /** Replicas of each service (default 2). */
  replicas?: number;
  /** Console router replicas (default `replicas`); with one, its requests are counted but it is not killed. */
  routers?: number;
  /** How long runs and deliveries still open after the traffic may take (default 60 s). */
  settleMs?: number;
  log?: (line: string) => void;
}

export interface RouteFigures {
  requests: number;
  /** Attempts that got no answer or a non-2xx answer. */
  failedAttempts: number;
  /** Calls whose error reached the caller (after the SDK's retries). */
  surfaced: number;
  /** Longest stretch, in seconds, during which every attempt on the route failed. */
  maxUnavailableSeconds: number;
}

export interface ReplicasSoakReport {
  /** Calls made through the SDK (each counted once, however many attempts it took). */
  requests: number;
  /** Attempts that failed (no answer, or an answer other than 2xx). */
  failed: number;
  /** Calls whose error reached the caller: 0 means the SDK retried every failed attempt into a success. */
  surfaced: number;
  /** Runs invoked that did not complete (failed, cancelled, never launched, or still open at the end). */
  runsLost: number;
  runs: number;
  /** Completed runs whose `invocation.completed` reached the receiver under more than one delivery id. */
  deliveriesDuplicated: number;
  /** Redeliveries of an id already received (the receiver's deduplication absorbs them). */
  redelivered: number;
  /** Completed runs whose `invocation.completed` never reached the receiver. */
  deliveriesMissing: number;
  /** The longest unavailability of any route, in seconds. */
  maxUnavailableSeconds: number;
  routes: Record<SoakRoute, RouteFigures>;
  /** The replicas killed, in order (`api 0`, `router 1` …). */
  kills: string[];
  /** What the surfaced errors said, a few of each route. */
  errors: string[];
  /** HAProxy's word on servers taken out (`is DOWN`, with the reason) and backends left without any. */
  balancerEvents: string[];
  line: string;
}

/** The summary line `pnpm soak:replicas` prints, exactly. */
export function replicasSoakLine(
  r: Pick<
    ReplicasSoakReport,
    'requests' | 'failed' | 'surfaced' | 'runsLost' | 'deliveriesDuplicated' | 'maxUnavailableSeconds'
  >,
): string {
  return `requests ${r.requests}, failed ${r.failed} (all retried by the SDK: ${r.surfaced === 0 ? 'yes' : 'no'}), runs lost ${r.runsLost}, deliveries duplicated ${r.deliveriesDuplicated}, max unavailability ${r.maxUnavailableSeconds.toFixed(1)} s`;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Attempt {
  at: number;
  ok: boolean;
}

/**
 * Longest stretch during which every attempt failed: from a failed attempt's start (the first after a success)
 * to the start of the next attempt that succeeded (or the last failed attempt's start when none followed).
 */
export function longestOutageSeconds(attempts: readonly Attempt[]): number {
  const sorted = [...attempts].sort((a, b) => a.at - b.at);
  let longest = 0;
  let since: number | null = null;
  let lastFailure = 0;
  for (const attempt of sorted) {
    if (!attempt.ok) {
      since ??= attempt.at;
      lastFailure = attempt.at;
    } else if (since !== null) {
      longest = Math.max(longest, attempt.at - since);
      since = null;
    }
  }
  if (since !== null) longest = Math.max(longest, lastFailure - since);
  return longest / 1000;
}

class Tally {
  readonly attempts = new Map<SoakRoute, Attempt[]>(SOAK_ROUTES.map((r) => [r, []]));
  readonly calls = new Map<SoakRoute, number>(SOAK_ROUTES.map((r) => [r, 0]));
  readonly surfaced = new Map<SoakRoute, number>(SOAK_ROUTES.map((r) => [r, 0]));
  readonly errors: string[] = [];
  readonly startedAt = Date.now();

  /** A fetch for the SDK that records every attempt of `route` (the whole answer is read here). */
  fetchFor(route: SoakRoute): (request: Request) => Promise<Response> {
    return async (request) => {
      const at = Date.now();
      try {
        const answer = await fetch(request);
        const bytes = [204, 205, 304].includes(answer.status) ? null : await answer.arrayBuffer();
        this.attempts.get(route)!.push({ at, ok: answer.status >= 200 && answer.status < 300 });
        return new Response(bytes, {
          status: answer.status,
          statusText: answer.statusText,
          headers: answer.headers,
        });
      } catch (error) {
        this.attempts.get(route)!.push({ at, ok: false });
        throw error;
      }
    };
  }

  /** One partner call of `route`: counted once; an error that reaches here is one the SDK did not hide. */
  async call<T>(route: SoakRoute, work: () => Promise<T>): Promise<T | undefined> {
    this.calls.set(route, this.calls.get(route)! + 1);
    try {
      return await work();
    } catch (error) {
      this.surfaced.set(route, this.surfaced.get(route)! + 1);
      if (this.errors.filter((e) => e.startsWith(`${route}:`)).length < 5) {
        const code = (error as { code?: string }).code ?? 'error';
        const at = ((Date.now() - this.startedAt) / 1000).toFixed(1);
        this.errors.push(
          `${route}: ${code} at ${at} s ${error instanceof Error ? error.message.slice(0, 120) : ''}`,
        );
      }
      return undefined;
    }
  }

  figures(route: SoakRoute): RouteFigures {
    const attempts = this.attempts.get(route)!;
    return {
      requests: this.calls.get(route)!,
      failedAttempts: attempts.filter((a) => !a.ok).length,
      surfaced: this.surfaced.get(route)!,
      maxUnavailableSeconds: longestOutageSeconds(attempts),
    };
  }
}

/** The receiver: verifies each delivery with the SDK's `Webhook` and records the ids per invocation. */
interface Receiver {
  url: string;
  /** Delivery ids of each invocation's `invocation.completed`. */
  completed: Map<string, Set<string>>;
  redelivered: number;
  rejected: number;
  setSecret(secret: string): void;
  close(): Promise<void>;
}

async function startReceiver(sdk: Sdk): Promise<Receiver> {
  let webhook: SdkWebhook | null = null;
  const receiver: Receiver = {
    url: '',
    completed: new Map(),
    redelivered: 0,
    rejected: 0,
    setSecret: (secret) => {
      webhook = new sdk.Webhook(secret);
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      if (!webhook) {
        res.writeHead(503).end();
        return;
      }
      webhook.verify(body, req.headers).then(
        (delivery) => {
          if (delivery.duplicate) receiver.redelivered += 1;
          if (delivery.event.type === 'invocation.completed') {
            const id = delivery.event.data.invocation_id;
            const ids = receiver.completed.get(id) ?? new Set<string>();
            ids.add(delivery.id);
            receiver.completed.set(id, ids);
          }
          res.writeHead(204).end();
        },
        () => {
          receiver.rejected += 1;
          res.writeHead(400).end();
        },
      );
    });
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${port}/deliveries`;
  return receiver;
}

type Fault = { name: string; run: () => Promise<void> };

/** One replica of each service in turn, alternating the index: api 0, worker 1, hub 0, router 1, api 1 … */
function faultsOf(stack: RunStack, routers: ConsoleRouters, count: number): Fault[] {
  const services: ('api' | 'worker' | 'hub' | 'router')[] = ['api', 'worker', 'hub'];
  if (routers.replicas.length > 1) services.push('router');
  const faults: Fault[] = [];
  for (let i = 0; faults.length < count; i += 1) {
    const service = services[i % services.length]!;
    const replicas = service === 'router' ? routers.replicas.length : stack.replicas[service].length;
    const index = (i + Math.floor(i / services.length)) % replicas;
    faults.push({
      name: `${service} ${index}`,
      run: () => (service === 'router' ? routers.killReplica(index) : stack.killReplica(service, index)),
    });
  }
  return faults;
}

/**
 * Runs the soak and reads every run and delivery back. Kills are spread over the duration (one per service at
 * least; more on a long soak, each at least 15 s after the previous restart).
 */
export async function runReplicasSoak(options: ReplicasSoakOptions = {}): Promise<ReplicasSoakReport> {
  const log = options.log ?? (() => undefined);
  const durationMs = options.durationMs ?? 180_000;
  const replicaCount = options.replicas ?? 2;
  const sdk = loadBuiltSdk();
  const receiver = await startReceiver(sdk);
  const stack = await startRunStack({
    replicas: replicaCount,
    redisUrl: testRedisUrl(9),
    env: {
      // Stages are not taken from their owner while the machine is loaded by restarts.
      WORKFLOW_STAGE_STALL_SECONDS: '20',
      WORKFLOW_ENCRYPTION_KEYS: `k1:${randomBytes(32).toString('base64')}`,
      WORKFLOW_DELIVERY_ALLOW_LOOPBACK: 'true',
      WORKFLOW_DELIVERY_RETRY_SCHEDULE: '0.5,1,2,3,5,5,5,5',
      WORKFLOW_DELIVERY_TIMEOUT_MS: '5000',
    },
  });
  let routers: ConsoleRouters | null = null;
  try {
    log(`soak: stack up (${replicaCount} replicas of each service)`);
    await stack.addAgent(['soak']);
    await stack.addAgent(['soak']);
    routers = await startConsoleRouters({
      owner: stack.owner,
      hubUrl: stack.hubUrl,
      workflowUrl: stack.workflowUrl,
      projectCode: stack.project.code,
      replicas: options.routers ?? replicaCount,
    });
    log(`soak: ${routers.replicas.length} console router(s) up`);
    const route = await stack.seedRoute({
      intent: 'replicas soak report',
      stages: [{ key: 'one', title: 'One', required_capabilities: ['soak'] }],
    });
    const setup = new sdk.Workflow({
      baseUrl: stack.workflowUrl,
      apiKey: stack.apiKey,
      projectId: stack.project.id,
    });
    const subscription = await setup.subscriptions.create({
      url: receiver.url,
      events: ['invocation.completed'],
    });
    receiver.setSecret(subscription.signing_secret);

    const tally = new Tally();
    const client = (r: SoakRoute) =>
      new sdk.Workflow({
        baseUrl: stack.workflowUrl,
        apiKey: stack.apiKey,
        projectId: stack.project.id,
        fetch: tally.fetchFor(r),
      });
    const [invoker, launcher, reader] = [client('invoke'), client('launch'), client('run status')];
    const hub = new sdk.Hub({
      baseUrl: stack.hubUrl,
      token: stack.ownerToken,
      fetch: tally.fetchFor('hub read'),
    });
    const routerClient = new sdk.Hub({
      baseUrl: routers.url,
      token: routers.token,
      fetch: tally.fetchFor('router health'),
    });
    const consoleHealth = async () => {
      const res = await routerClient.raw.GET(routers!.healthPath as never, { parseAs: 'text' });
      if (!res.response.ok)
        throw new sdk.SvcError(`HTTP ${res.response.status} ${String(res.error ?? '').slice(0, 300)}`, {
          code: `http_${res.response.status}`,
        });
    };

    const runs: string[] = [];
    const end = Date.now() + durationMs;
    // Traffic runs for the duration and, when restarts on a loaded machine took longer, until the last kill's
    // replica is back: no kill happens without traffic.
    let faultsDone = false;
    const going = () => Date.now() < end || !faultsDone;
    const streams: Promise<void>[] = [];
    streams.push(
      (async () => {
        const every = options.runEveryMs ?? 1_000;
        while (going()) {
          const next = Date.now() + every;
          const created = await tally.call('invoke', () =>
            invoker.invocations.create({ intent: route.intent }),
          );
          if (created) {
            const id = created.invocation.invocation_id;
            runs.push(id);
            await tally.call('launch', () => launcher.invocations.launch(id));
          }
          await sleep(Math.max(0, next - Date.now()));
        }
      })(),
    );
    const reads: [SoakRoute, () => Promise<unknown>][] = [
      [
        'run status',
        () => (runs.length ? reader.invocations.get(runs[runs.length - 1]!) : Promise.resolve()),
      ],
      ['hub read', () => hub.projects.get(stack.project.id)],
      ['router health', consoleHealth],
    ];
    for (const [name, read] of reads) {
      streams.push(
        (async () => {
          while (going()) {
            await tally.call(name, read);
            await sleep(options.readEveryMs ?? 200);
          }
        })(),
      );
    }

    // The kills: the first after a tenth of the duration, then evenly spaced, the last ending before the traffic does.
    const services = routers.replicas.length > 1 ? 4 : 3;
    const killCount = Math.max(services, Math.floor(durationMs / 20_000));
    const faults = faultsOf(stack, routers, killCount);
    const kills: string[] = [];
    const startedAt = Date.now();
    const gap = (durationMs * 0.8) / faults.length;
    await sleep(durationMs * 0.1);
    for (const fault of faults) {
      const started = Date.now();
      log(`soak: kill -9 ${fault.name} (${((started - startedAt) / 1000).toFixed(1)} s in)`);
      await fault.run();
      kills.push(fault.name);
      log(`soak: ${fault.name} restarted after ${((Date.now() - started) / 1000).toFixed(1)} s`);
      await sleep(Math.max(0, gap - (Date.now() - started)));
    }
    faultsDone = true;
    await Promise.all(streams);
    log(`soak: traffic over (${runs.length} runs invoked); reading runs and deliveries back`);

    // Every run is read (outside the counts) until it ends and its delivery arrived, or the settle time is up.
    const quiet = new sdk.Workflow({
      baseUrl: stack.workflowUrl,
      apiKey: stack.apiKey,
      projectId: stack.project.id,
    });
    const states = new Map<string, string>();
    const settleEnd = Date.now() + (options.settleMs ?? 60_000);
    for (;;) {
      for (const id of runs) {
        if (['completed', 'failed', 'cancelled'].includes(states.get(id) ?? '')) continue;
        const run = await quiet.invocations.get(id).catch(() => null);
        if (run) states.set(id, run.state);
      }
      const completed = runs.filter((id) => states.get(id) === 'completed');
      const open = runs.filter((id) => !['completed', 'failed', 'cancelled'].includes(states.get(id) ?? ''));
      const undelivered = completed.filter((id) => !receiver.completed.has(id));
      if ((open.length === 0 && undelivered.length === 0) || Date.now() > settleEnd) break;
      await sleep(1_000);
    }
    const completed = runs.filter((id) => states.get(id) === 'completed');
    const routes = Object.fromEntries(SOAK_ROUTES.map((r) => [r, tally.figures(r)])) as Record<
      SoakRoute,
      RouteFigures
    >;
    const figures = Object.values(routes);
    const report: Omit<ReplicasSoakReport, 'line'> = {
      requests: figures.reduce((sum, f) => sum + f.requests, 0),
      failed: figures.reduce((sum, f) => sum + f.failedAttempts, 0),
      surfaced: figures.reduce((sum, f) => sum + f.surfaced, 0),
      runs: runs.length,
      runsLost: runs.length - completed.length + tally.surfaced.get('invoke')!,
      deliveriesDuplicated: completed.filter((id) => (receiver.completed.get(id)?.size ?? 0) > 1).length,
      redelivered: receiver.redelivered,
      deliveriesMissing: completed.filter((id) => !receiver.completed.has(id)).length,
      maxUnavailableSeconds: Math.max(...figures.map((f) => f.maxUnavailableSeconds)),
      routes,
      kills,
      errors: tally.errors,
      balancerEvents: [stack.loadBalancer, routers.loadBalancer].flatMap((lb) =>
        (lb?.output() ?? '')
          .split('\n')
          .filter((l) => l.startsWith('[') && /is DOWN|no server available/.test(l))
          .map((l) => l.replace(/^\[\w+\]\s+\(\d+\) : /, '').replace(/\. \d+ active and.*$/, '')),
      ),
    };
    if (receiver.rejected > 0)
      report.errors.push(`receiver: ${receiver.rejected} deliveries failed verification`);
    return { ...report, line: replicasSoakLine(report) };
  } finally {
    await routers?.close();
    await stack.close();
    await receiver.close();
  }
}
