import { promises as fs } from 'node:fs';
import path from 'node:path';
import type { RuntimeControlApi } from '@svc/contracts';
import { STALE_MODEL_EXIT_CODE } from '../domain/restart-policy';
import type { RestartPolicy } from '../domain/restart-policy';
import { agentDir, agentLogFile, agentRuntimeHome } from './agent-state';
import type { ChildRegistry } from '@svc/service-kit/child-registry';
import { ManagedProcess } from './managed-process';
import { appendFileSync } from 'node:fs';
import { ensureOwnerOnlyDir } from './secret-files';

export type SupervisedAgentSpec = RuntimeControlApi.components['schemas']['SupervisedAgentSpec'];
export type SupervisedAgent = RuntimeControlApi.components['schemas']['SupervisedAgent'];

/** A refusal the control API answers with a problem (status and stable code). */
export class SupervisorError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = 'SupervisorError';
  }
}

interface Entry {
  spec: SupervisedAgentSpec;
  restart: RestartPolicy;
  process: ManagedProcess;
  staleModelRecoveryUsed: boolean;
}

export interface AgentSupervisorOptions {
  stateDir: string;
  baseEnv: Record<string, string>;
  /** The agent's console proxy key (AGENT_CONSOLE_PROXY_KEY) for agents that serve a console. */
  consoleProxyKey: (agentId: string) => string;
  /** Called after every start and stop (the console router reloads its routes). */
  onRoutesChanged: () => void;
  graceMs: number;
  log: (line: string) => void;
  /** Where agents' processes are recorded (see `ChildRegistry`). */
  registry?: ChildRegistry;
}

/**
 * The agents `svc start` handed to this runtime: their processes, restart policy and stale-model recovery
 * (exit 78 clears that agent's runtime home, once, and starts it again). Environments are never exposed.
 */
export class AgentSupervisor {
  private readonly agents = new Map<string, Entry>();

  constructor(private readonly options: AgentSupervisorOptions) {}

  list(): SupervisedAgent[] {
    return [...this.agents.values()].map((e) => this.view(e));
  }

  get(name: string): SupervisedAgent {
    return this.view(this.entry(name));
  }

  /**
   * The environment an agent was handed (its token and service URLs), for the runtime's own calls on the
   * agent's behalf (a drain asks which stages it holds). Never shown or logged.
   */
  environmentOf(name: string): Record<string, string> {
    return { ...this.entry(name).spec.env };
  }

  /** Live process handles, for tests and status (never the environment). */
  pidOf(name: string): number | null {
    return this.agents.get(name)?.process.pid ?? null;
  }

  private entry(name: string): Entry {
    const entry = this.agents.get(name);
    if (!entry)
      throw new SupervisorError(404, 'agent_not_supervised', `no agent named "${name}" is supervised here`);
    return entry;
  }

  private view(e: Entry): SupervisedAgent {
    const p = e.process;
    return {
      agent_id: e.spec.agent_id,
      name: e.spec.name,
      state: p.state,
      pid: p.pid,
      argv: e.spec.argv,
      cwd: e.spec.cwd,
      serve_port: e.spec.serve_port ?? null,
      restart: e.restart,
      restarts: p.restarts,
      started_at: p.startedAt,
      last_exit: p.lastExit,
      log_file: agentLogFile(this.options.stateDir, e.spec.name),
    };
  }

  private environment(spec: SupervisedAgentSpec): Record<string, string> {
    const env: Record<string, string> = { ...this.options.baseEnv, ...spec.env };
    if (spec.serve_port !== undefined && spec.serve_port !== null) {
      env.AGENT_CONSOLE_PROXY_KEY = this.options.consoleProxyKey(spec.agent_id);
    }
    return env;
  }

  async supervise(spec: SupervisedAgentSpec): Promise<SupervisedAgent> {
    const existing = this.agents.get(spec.name);
    if (existing && existing.process.state !== 'failed' && existing.process.state !== 'stopped') {
      throw new SupervisorError(
        409,
        'agent_already_supervised',
        `an agent named "${spec.name}" already runs here`,
      );
    }
    if (spec.serve_port !== undefined && spec.serve_port !== null) {
      for (const other of this.agents.values()) {
        if (other.spec.name === spec.name) continue;
        const live = other.process.state !== 'failed' && other.process.state !== 'stopped';
        if (live && other.spec.serve_port === spec.serve_port) {
          throw new SupervisorError(
            409,
            'serve_port_in_use',
            `serve port ${spec.serve_port} is used by agent "${other.spec.name}" on this host`,
          );
        }
      }
    }
    if (!path.isAbsolute(spec.cwd)) {
      throw new SupervisorError(400, 'cwd_not_absolute', 'cwd must be an absolute path');
    }
    const cwdStat = await fs.stat(spec.cwd).catch(() => undefined);
    if (!cwdStat?.isDirectory()) {
      throw new SupervisorError(400, 'cwd_not_found', `the working directory ${spec.cwd} does not exist`);
    }
    await ensureOwnerOnlyDir(agentDir(this.options.stateDir, spec.name));
    const restart: RestartPolicy = spec.restart ?? 'on-failure';
    const entry: Entry = { spec, restart, staleModelRecoveryUsed: false, process: undefined as never };
    entry.process = new ManagedProcess({
      name: `agent ${spec.name}`,
      argv: spec.argv,
      cwd: spec.cwd,
      env: this.environment(spec),
      logFile: agentLogFile(this.options.stateDir, spec.name),
      restart,
      canGiveUp: true,
      log: this.options.log,
      registry: this.options.registry,
      onChange: () => undefined,
      onUnexpectedExit: async (exit) => {
        if (exit.code !== STALE_MODEL_EXIT_CODE || entry.staleModelRecoveryUsed) return undefined;
        entry.staleModelRecoveryUsed = true;
        await this.clearRuntimeHome(spec.name);
        const line = `agent ${spec.name}: exit ${STALE_MODEL_EXIT_CODE} (ProviderModelNotFoundError): cleared its runtime home and started it again`;
        this.options.log(line);
        try {
          appendFileSync(agentLogFile(this.options.stateDir, spec.name), `[svc runtime] ${line}\n`);
        } catch {
          // the log is best effort
        }
        return 'restart-now';
      },
    });
    try {
      await entry.process.start();
    } catch (error) {
      throw new SupervisorError(
        400,
        'spawn_failed',
        `could not start ${spec.argv[0]}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
      );
    }
    this.agents.set(spec.name, entry);
    this.options.log(`agent ${spec.name}: started (pid ${entry.process.pid})`);
    this.options.onRoutesChanged();
    return this.view(entry);
  }

  /** Clears the agent's provider runtime home and leaves an empty owner-only directory. */
  private async clearRuntimeHome(name: string): Promise<void> {
    const home = agentRuntimeHome(this.options.stateDir, name);
    await fs.rm(home, { recursive: true, force: true });
    await ensureOwnerOnlyDir(home);
  }

  async stop(name: string): Promise<SupervisedAgent> {
    const entry = this.entry(name);
    await entry.process.stop(this.options.graceMs);
    this.agents.delete(name);
    this.options.log(`agent ${name}: stopped`);
    this.options.onRoutesChanged();
    return this.view(entry);
  }

  /**
   * Restarts the agent's process; `env` replaces its environment, then `setEnv` sets the variables it names
   * and keeps the others (a refreshed AGENT_TOKEN).
   */
  async restart(
    name: string,
    env: Record<string, string> | undefined,
    setEnv?: Record<string, string>,
  ): Promise<SupervisedAgent> {
    const entry = this.entry(name);
    if (env || setEnv) {
      entry.spec = { ...entry.spec, env: { ...(env ?? entry.spec.env), ...(setEnv ?? {}) } };
      entry.process.setEnv(this.environment(entry.spec));
    }
    entry.staleModelRecoveryUsed = false;
    try {
      await entry.process.restartNow(this.options.graceMs);
    } catch (error) {
      throw new SupervisorError(
        400,
        'spawn_failed',
        `could not start ${entry.spec.argv[0]}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
      );
    }
    this.options.log(`agent ${name}: restarted (pid ${entry.process.pid})`);
    this.options.onRoutesChanged();
    return this.view(entry);
  }

  /** Stops every agent (in parallel); returns the ids of the agents that were supervised. */
  async stopAll(): Promise<Array<{ name: string; agent_id: string }>> {
    const entries = [...this.agents.values()];
    await Promise.all(entries.map((e) => e.process.stop(this.options.graceMs)));
    this.agents.clear();
    return entries.map((e) => ({ name: e.spec.name, agent_id: e.spec.agent_id }));
  }
}
