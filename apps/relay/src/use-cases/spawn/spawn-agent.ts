import { AppError, canonicalHash } from '@svc/service-kit';
import type { Logger } from '@svc/service-kit';
import type { HubSpawnEvents } from '../../data/hub-spawn-events';
import type { SpawnLog } from '../../data/spawn-log';
import { runProcess, signalGroup } from '../../data/spawn-process';
import {
  childEnvironment,
  normalizeSpawnRequest,
  outcomeOfStart,
  spawnArgv,
  stopArgv,
} from '../../domain/spawn-command';
import type { SpawnOutcome, SpawnRequest, SvcInvocation } from '../../domain/spawn-command';

export interface SpawnSettings {
  /** How `svc` is run; undefined when `SVC_RELAY_SVC_ENTRY` is not set (the host cannot take spawns). */
  svc: SvcInvocation | undefined;
  commands: Record<string, string | null>;
  childEnvKeep: string[];
  startTimeoutMs: number;
  stopGraceMs: number;
  /** How long a request waits for its spawn to end before answering 202. */
  waitMs: number;
  /** Settings the host still lacks for spawns (variable names), checked before each spawn. */
  missingSettings: () => string[];
  /** Whether the host is draining (its runtime says so through a marker file): new spawns are refused. */
  draining: () => boolean;
}

export interface SpawnDeps {
  settings: SpawnSettings;
  log: SpawnLog;
  events: HubSpawnEvents;
  logger: Logger;
  /** The relay's own environment, the source of the spawned process's allow-listed variables. */
  env: NodeJS.ProcessEnv;
  now: () => Date;
}

export type SpawnAnswer =
  | { status: 200; body: Extract<SpawnOutcome, { ok: true }>['body'] }
  | { status: 202; body: { spawn_id: string; state: 'in_progress'; requested_at: string } };

interface SpawnEntry {
  requestHash: string;
  name: string;
  requestedAt: Date;
  done: Promise<SpawnOutcome>;
  outcome?: SpawnOutcome;
}

/** Answers about the host, not the request: they do not consume the spawn id, so a repeat is tried afresh. */
const HOST_STATE_CODES = new Set(['host_not_spawn_ready']);

function problemOf(spawnId: string, outcome: Extract<SpawnOutcome, { ok: false }>): AppError {
  const { code, detail, rule, cli_code, exit_code } = outcome.problem;
  return new AppError({
    status: outcome.status,
    code,
    detail,
    extra: { spawn_id: spawnId, rule, cli_code, exit_code },
    ...(outcome.status === 503 ? { headers: { 'Retry-After': '10' } } : {}),
  });
}

const failure = (status: number, code: string, detail: string): SpawnOutcome => ({
  ok: false,
  status,
  problem: { code, detail, rule: null, cli_code: null, exit_code: null },
});

/**
 * The relay's spawns (spec: Relay `POST /spawn`). Each spawn id has one outcome: a repeat with the same body
 * waits for it (or gets 202 while it is in flight), another body is a conflict. One agent name is spawned at
 * most once at a time. Outcomes survive a relay restart through the spawn log.
 */
export class AgentSpawner {
  private readonly entries = new Map<string, SpawnEntry>();
  private readonly namesInFlight = new Map<string, string>();
  /** Process groups of the `svc start` runs in flight. */
  private readonly running = new Set<number>();
  readonly counts = { requested: 0, started: 0, failed: 0 };

  constructor(private readonly deps: SpawnDeps) {
    this.restore();
  }

  get inFlight(): number {
    return this.namesInFlight.size;
  }

  async spawn(raw: SpawnRequest): Promise<SpawnAnswer> {
    const request = normalizeSpawnRequest(raw);
    const requestHash = canonicalHash(request);
    const spawnId = request.spawn_id;
    const name = request.agent.name;
    const known = this.entries.get(spawnId);
    if (known) {
      if (known.requestHash !== requestHash) {
        this.deps.log.append({
          spawn_id: spawnId,
          event: 'refused',
          request_sha256: requestHash,
          status: 409,
          code: 'spawn_id_conflict',
        });
        throw new AppError({
          status: 409,
          code: 'spawn_id_conflict',
          detail: `Spawn id ${spawnId} was used with another request; use a new spawn id for a different spawn.`,
          extra: { spawn_id: spawnId },
        });
      }
      this.deps.log.append({
        spawn_id: spawnId,
        event: 'replayed',
        request_sha256: requestHash,
        agent_name: name,
      });
      return this.answer(spawnId, known);
    }
    if (this.deps.settings.draining()) {
      // A host answer: the spawn id is not consumed, the hub places the spawn on another host.
      this.deps.log.append({
        spawn_id: spawnId,
        event: 'refused',
        request_sha256: requestHash,
        status: 409,
        code: 'runtime_host_draining',
      });
      throw new AppError({
        status: 409,
        code: 'runtime_host_draining',
        detail: 'This runtime host is draining: it takes no new spawns. Spawn on another host.',
        extra: { spawn_id: spawnId },
      });
    }
    const other = this.namesInFlight.get(name);
    if (other !== undefined) {
      throw new AppError({
        status: 409,
        code: 'spawn_in_progress',
        detail: `Agent "${name}" is being spawned by spawn ${other}; wait for its outcome.`,
        extra: { spawn_id: spawnId, in_progress_spawn_id: other },
      });
    }

    this.namesInFlight.set(name, spawnId);
    this.counts.requested += 1;
    this.deps.log.append({
      spawn_id: spawnId,
      event: 'requested',
      request_sha256: requestHash,
      agent_name: name,
      command_key: request.command_key,
    });
    this.deps.events.report({ spawn_id: spawnId, event: 'requested', agent_name: name });
    // The entry is in the map before anything is awaited: a repeat arriving now waits for this same spawn.
    const entry: SpawnEntry = {
      requestHash,
      name,
      requestedAt: this.deps.now(),
      done: this.run(request).then((outcome) => this.settle(spawnId, entry, outcome)),
    };
    this.entries.set(spawnId, entry);
    return this.answer(spawnId, entry);
  }

  private async answer(spawnId: string, entry: SpawnEntry): Promise<SpawnAnswer> {
    const outcome =
      entry.outcome ??
      (await Promise.race([
        entry.done,
        new Promise<undefined>((resolve) =>
          setTimeout(() => resolve(undefined), this.deps.settings.waitMs).unref(),
        ),
      ]));
    if (!outcome) {
      return {
        status: 202,
        body: { spawn_id: spawnId, state: 'in_progress', requested_at: entry.requestedAt.toISOString() },
      };
    }
    if (outcome.ok) return { status: 200, body: outcome.body };
    throw problemOf(spawnId, outcome);
  }

  private settle(spawnId: string, entry: SpawnEntry, outcome: SpawnOutcome): SpawnOutcome {
    entry.outcome = outcome;
    this.namesInFlight.delete(entry.name);
    const started = outcome.ok;
    if (started) this.counts.started += 1;
    else this.counts.failed += 1;
    const code = outcome.ok ? undefined : outcome.problem.code;
    this.deps.log.append({
      spawn_id: spawnId,
      event: started ? 'started' : 'failed',
      request_sha256: entry.requestHash,
      agent_name: entry.name,
      status: outcome.status,
      ...(code ? { code } : {}),
      outcome,
    });
    this.deps.events.report({
      spawn_id: spawnId,
      event: started ? 'started' : 'failed',
      agent_name: entry.name,
      ...(outcome.ok ? { agent_id: outcome.body.agent_id } : { code, detail: outcome.problem.detail }),
    });
    this.deps.logger.info(
      { spawn_id: spawnId, agent_name: entry.name, status: outcome.status, ...(code ? { code } : {}) },
      started ? 'spawn started' : 'spawn failed',
    );
    // An answer about the host's state leaves the spawn id free for a later attempt.
    if (code && HOST_STATE_CODES.has(code)) this.entries.delete(spawnId);
    return outcome;
  }

  private async run(request: SpawnRequest): Promise<SpawnOutcome> {
    const { settings } = this.deps;
    const key = request.command_key ?? 'default';
    if (!Object.prototype.hasOwnProperty.call(settings.commands, key)) {
      return failure(
        422,
        'command_not_allowed',
        `Command key "${key}" is not in this host's allow-list (SVC_RELAY_COMMANDS); allowed: ${Object.keys(settings.commands).join(', ') || 'none'}.`,
      );
    }
    const missing = settings.missingSettings();
    if (!settings.svc || missing.length > 0) {
      return failure(
        503,
        'host_not_spawn_ready',
        `This relay cannot spawn yet: missing ${[...(settings.svc ? [] : ['SVC_RELAY_SVC_ENTRY']), ...missing].join(', ')}.`,
      );
    }
    const svc = settings.svc;
    const env = childEnvironment(this.deps.env, settings.childEnvKeep);
    let pid: number | undefined;
    const run = await runProcess(spawnArgv(svc, request, settings.commands[key] ?? null), {
      env,
      timeoutMs: settings.startTimeoutMs,
      graceMs: settings.stopGraceMs,
      onStart: (started) => {
        pid = started;
        this.running.add(started);
      },
    }).finally(() => {
      if (pid !== undefined) this.running.delete(pid);
    });
    if (run.timedOut) {
      // svc start may have handed the agent to the runtime before it was stopped: undo that too.
      const stop = await runProcess(stopArgv(svc, request.agent.name), {
        env,
        timeoutMs: 30_000,
        graceMs: settings.stopGraceMs,
      });
      return failure(
        504,
        'spawn_timeout',
        `svc start did not finish within ${settings.startTimeoutMs} ms; it was stopped${stop.exitCode === 0 ? ' and the agent with it' : ''}.`,
      );
    }
    return outcomeOfStart({
      spawnId: request.spawn_id,
      exitCode: run.exitCode,
      stdout: run.stdout,
      now: this.deps.now(),
    });
  }

  /**
   * Stops the `svc start` runs in flight (the relay is stopping): SIGTERM to each process group, SIGKILL to what
   * is left after the stop grace period.
   */
  async stopInFlight(): Promise<void> {
    const groups = [...this.running];
    if (groups.length === 0) return;
    for (const pid of groups) signalGroup(pid, 'SIGTERM');
    const deadline = Date.now() + this.deps.settings.stopGraceMs;
    while (this.running.size > 0 && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    for (const pid of this.running) signalGroup(pid, 'SIGKILL');
  }

  /** Outcomes recorded before a restart answer their repeats; a spawn the restart cut off failed. */
  private restore(): void {
    const open = new Map<string, { hash: string; name: string; at: string }>();
    for (const line of this.deps.log.read()) {
      if (line.event === 'requested' && line.request_sha256) {
        open.set(line.spawn_id, { hash: line.request_sha256, name: line.agent_name ?? '', at: line.at });
      } else if (
        (line.event === 'started' || line.event === 'failed') &&
        line.outcome &&
        line.request_sha256
      ) {
        open.delete(line.spawn_id);
        const outcome = line.outcome as SpawnOutcome;
        if (!outcome.ok && HOST_STATE_CODES.has(outcome.problem.code)) {
          this.entries.delete(line.spawn_id);
          continue;
        }
        this.entries.set(line.spawn_id, {
          requestHash: line.request_sha256,
          name: line.agent_name ?? '',
          requestedAt: new Date(line.at),
          done: Promise.resolve(outcome),
          outcome,
        });
      }
    }
    for (const [spawnId, { hash, name, at }] of open) {
      const outcome = failure(
        502,
        'spawn_interrupted',
        'The relay restarted while this spawn was in flight.',
      );
      this.entries.set(spawnId, {
        requestHash: hash,
        name,
        requestedAt: new Date(at),
        done: Promise.resolve(outcome),
        outcome,
      });
      this.deps.log.append({
        spawn_id: spawnId,
        event: 'failed',
        request_sha256: hash,
        agent_name: name,
        status: 502,
        code: 'spawn_interrupted',
        outcome,
      });
    }
  }
}
