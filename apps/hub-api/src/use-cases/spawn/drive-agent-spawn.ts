import type { HubDeps } from '../../deps';
import { callRelaySpawn, relayBaseUrl } from '../../data/relay-client';
import type { RelaySpawnAnswer, RelaySpawnRequest } from '../../data/relay-client';
import { OPEN_SPAWN_STATES } from '../../data/spawn.lookups';
import type { AgentSpawn } from '../../generated/prisma/client';

export interface SpawnDriveOptions {
  /** Identifies this hub process as the holder of a spawn's lease. */
  owner: string;
  /** Timeout of one relay call. */
  relayTimeoutMs: number;
  /** How long a lease lasts without renewal (longer than one relay call). */
  leaseMs: number;
  /** Back-off after an answerless attempt: doubles from the first to the last value. */
  backoffMs: { first: number; max: number };
  /** The longest wait honoured from a relay's Retry-After. */
  maxRetryAfterMs: number;
  /** Aborted when the hub stops: the lease is released and another process resumes the spawn. */
  signal: AbortSignal;
  fetch?: (input: Request) => Promise<Response>;
}

type Failure = Extract<RelaySpawnAnswer, { kind: 'failed' }>;

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener('abort', done);
      resolve();
    }
    signal.addEventListener('abort', done, { once: true });
  });
}

/** Takes the spawn's lease when it is open and nobody else holds one; false otherwise. */
async function claimLease(deps: HubDeps, spawnId: string, options: SpawnDriveOptions): Promise<boolean> {
  const now = deps.now();
  const claimed = await deps.db.agentSpawn.updateMany({
    where: {
      id: spawnId,
      state: { in: [...OPEN_SPAWN_STATES] },
      OR: [{ leaseUntil: null }, { leaseUntil: { lt: now } }, { leaseOwner: options.owner }],
    },
    data: { leaseOwner: options.owner, leaseUntil: new Date(now.getTime() + options.leaseMs) },
  });
  return claimed.count === 1;
}

async function finish(
  deps: HubDeps,
  spawn: AgentSpawn,
  options: SpawnDriveOptions,
  outcome: { kind: 'started'; agentId: string; pid: number | null; servePort: number | null } | Failure,
): Promise<void> {
  const now = deps.now();
  const fields =
    outcome.kind === 'started'
      ? {
          state: 'started' as const,
          agentId: outcome.agentId,
          pid: outcome.pid,
          servePort: outcome.servePort,
          startedAt: now,
        }
      : {
          state: 'failed' as const,
          errorCode: outcome.code,
          errorDetail: outcome.detail,
          errorRule: outcome.rule,
          errorCliCode: outcome.cliCode,
          errorStatus: outcome.status,
        };
  await deps.db.$transaction(async (tx) => {
    const ended = await tx.agentSpawn.updateMany({
      where: { id: spawn.id, state: { in: [...OPEN_SPAWN_STATES] }, leaseOwner: options.owner },
      data: { ...fields, finishedAt: now, leaseOwner: null, leaseUntil: null, nextAttemptAt: null },
    });
    if (ended.count !== 1) return;
    const authorization = spawn.authorization as { source?: string; invocation_id?: string | null };
    await deps.audit.record(
      {
        workspaceId: spawn.workspaceId,
        action: outcome.kind === 'started' ? 'agent.spawn.started' : 'agent.spawn.failed',
        targetType: 'agent_spawn',
        targetId: spawn.id,
        data: {
          spawn_id: spawn.id,
          project_id: spawn.projectId,
          runtime_instance_id: spawn.runtimeInstanceId,
          agent_name: spawn.name,
          requested_by: spawn.requestedBy,
          authorization_source: authorization.source ?? null,
          invocation_id: authorization.invocation_id ?? null,
          ...(outcome.kind === 'started'
            ? { agent_id: outcome.agentId, pid: outcome.pid, serve_port: outcome.servePort }
            : {
                code: outcome.code,
                detail: outcome.detail,
                rule: outcome.rule,
                cli_code: outcome.cliCode,
                relay_status: outcome.status,
              }),
        },
      },
      tx,
    );
  });
  deps.logger.info(
    {
      spawn_id: spawn.id,
      runtime_instance_id: spawn.runtimeInstanceId,
      state: fields.state,
      ...(outcome.kind === 'failed' ? { code: outcome.code } : { agent_id: outcome.agentId }),
    },
    `agent spawn ${fields.state}`,
  );
}

const hubFailure = (code: string, detail: string): Failure => ({
  kind: 'failed',
  status: null,
  code,
  detail,
  rule: null,
  cliCode: null,
});

/**
 * Drives one spawn to its outcome through its host's relay: `POST {relay base}/spawn` with the host's relay
 * token (unsealed here, sent in the header only) and the recorded SpawnRequest, repeated with the same
 * `spawn_id` while the relay answers 202 (after its Retry-After), an untyped 5xx or nothing (with back-off),
 * until the relay answers the outcome or the spawn's deadline passes. A session always makes at least one
 * call, so a spawn resumed after its deadline still asks the relay once. The spawn's lease is held (and
 * renewed at each attempt) while driving, so one process drives a spawn at a time; when the hub stops, the
 * lease is released and the sweeper of another process resumes the spawn.
 */
export async function driveAgentSpawn(
  deps: HubDeps,
  spawnId: string,
  options: SpawnDriveOptions,
): Promise<void> {
  if (!(await claimLease(deps, spawnId, options))) return;
  const spawn = await deps.db.agentSpawn.findUnique({ where: { id: spawnId } });
  if (!spawn) return;
  const host = await deps.db.runtimeHost.findUnique({
    where: { id: spawn.runtimeInstanceId },
    include: { environment: { include: { environment: true } } },
  });
  if (!host) {
    await finish(
      deps,
      spawn,
      options,
      hubFailure(
        'runtime_host_gone',
        `Runtime host '${spawn.runtimeInstanceId}' was removed before the spawn ended.`,
      ),
    );
    return;
  }
  const baseUrl = relayBaseUrl(host, host.environment?.environment);
  const request = spawn.relayRequest as unknown as RelaySpawnRequest;
  let backoff = options.backoffMs.first;
  let calls = 0;
  let lastReason = 'no answer yet';
  for (;;) {
    if (options.signal.aborted) {
      await deps.db.agentSpawn.updateMany({
        where: { id: spawn.id, leaseOwner: options.owner },
        data: { leaseOwner: null, leaseUntil: null },
      });
      return;
    }
    const now = deps.now();
    if (calls > 0 && now >= spawn.deadlineAt) {
      await finish(
        deps,
        spawn,
        options,
        hubFailure(
          'spawn_deadline_exceeded',
          `The relay at ${baseUrl} gave no outcome before the spawn's deadline (last: ${lastReason}).`,
        ),
      );
      return;
    }
    calls += 1;
    const renewed = await deps.db.agentSpawn.updateMany({
      where: { id: spawn.id, state: { in: [...OPEN_SPAWN_STATES] }, leaseOwner: options.owner },
      data: {
        state: 'in_progress',
        attempts: { increment: 1 },
        leaseUntil: new Date(now.getTime() + options.leaseMs),
        nextAttemptAt: null,
      },
    });
    if (renewed.count !== 1) return;
    // Opened for each call and dropped right after it: the token lives in this scope only.
    let relayToken: string;
    try {
      relayToken = deps.box.open(host.relayTokenCiphertext, host.id);
    } catch {
      await finish(
        deps,
        spawn,
        options,
        hubFailure(
          'relay_token_unavailable',
          `The relay token of runtime host '${host.id}' cannot be opened with the hub's keys; rotate the relay token.`,
        ),
      );
      return;
    }
    const answer = await callRelaySpawn({
      baseUrl,
      relayToken,
      request,
      timeoutMs: options.relayTimeoutMs,
      signal: options.signal,
      ...(options.fetch ? { fetch: options.fetch } : {}),
    });
    if (answer.kind === 'started') {
      await finish(deps, spawn, options, {
        kind: 'started',
        agentId: answer.started.agent_id,
        pid: answer.started.pid,
        servePort: answer.started.serve_port,
      });
      return;
    }
    if (answer.kind === 'failed') {
      await finish(deps, spawn, options, answer);
      return;
    }
    let waitMs: number;
    if (answer.kind === 'in_flight') {
      lastReason = 'the relay answered 202 (in flight)';
      waitMs = Math.min((answer.retryAfterSeconds ?? 1) * 1000, options.maxRetryAfterMs);
      backoff = options.backoffMs.first;
    } else {
      if (answer.reason === 'hub_stopping') continue;
      lastReason = answer.reason;
      waitMs = backoff;
      backoff = Math.min(backoff * 2, options.backoffMs.max);
      deps.logger.warn(
        { spawn_id: spawn.id, runtime_instance_id: host.id, reason: answer.reason, status: answer.status },
        'relay spawn call gave no outcome; retrying',
      );
    }
    const remaining = spawn.deadlineAt.getTime() - deps.now().getTime();
    waitMs = Math.max(0, Math.min(waitMs, remaining));
    await deps.db.agentSpawn.updateMany({
      where: { id: spawn.id, leaseOwner: options.owner },
      data: {
        nextAttemptAt: new Date(deps.now().getTime() + waitMs),
        leaseUntil: new Date(deps.now().getTime() + waitMs + options.leaseMs),
      },
    });
    await sleep(waitMs, options.signal);
  }
}
