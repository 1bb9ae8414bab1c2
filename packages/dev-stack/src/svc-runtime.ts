import path from 'node:path';
import { startBuiltEntryPoint } from '@svc/testing';

/** Name of the development agent that `pnpm start` starts with `svc start` (its console is routed too). */
export const DEV_AGENT_NAME = 'dev-console-agent';
/** The local provider: answers without a provider credential (the hub manages `local` in development). */
export const DEV_AGENT_MODEL = 'local/echo';
/**
 * `console` for its console, `report` for the stages of the development project's reporting template (the one
 * `pnpm demo` and the README's example use), so a first invocation completes without any other step.
 */
export const DEV_AGENT_CAPABILITIES = ['console', 'report'];

export interface SvcCliOptions {
  repoRoot: string;
  /** The CLI's configuration directory (`SVC_CONFIG_DIR`): `<state dir>/cli`. */
  configDir: string;
  runtimeInstanceId: string;
  workdirRoot: string;
  workflowUrl: string;
}

/**
 * The `svc` command line as an operator runs it on a runtime host: the compiled CLI (`apps/svc-cli/bin/run.js`)
 * with the host's environment (config directory, inventory id, workdir root). Every call asks for `--json` and
 * returns the envelope's result; a failure throws with the CLI's own one-line message.
 */
export class SvcCli {
  readonly bin: string;

  constructor(private readonly options: SvcCliOptions) {
    this.bin = path.join(options.repoRoot, 'apps', 'svc-cli', 'bin', 'run.js');
  }

  /** The environment every `svc` process of the development host gets (no secret in it). */
  env(): Record<string, string> {
    return {
      HOME: process.env.HOME ?? this.options.configDir,
      NO_COLOR: '1',
      SVC_CONFIG_DIR: this.options.configDir,
      SVC_RUNTIME_INSTANCE_ID: this.options.runtimeInstanceId,
      SVC_AGENT_WORKDIR_ROOT: this.options.workdirRoot,
      SVC_WORKFLOW_URL: this.options.workflowUrl,
    };
  }

  async run<T>(args: string[], input?: string): Promise<T> {
    const name = `svc ${args[0] ?? ''}`.trim();
    const proc = startBuiltEntryPoint(path.dirname(this.bin), this.bin, this.env(), {
      name,
      args: [...args, '--json'],
      ...(input === undefined ? {} : { input }),
    });
    const code = await proc.exited;
    let envelope: {
      ok?: boolean;
      result?: T;
      error?: { code?: string; message?: string; fix?: string | null };
    };
    try {
      envelope = JSON.parse(proc.stdout()) as typeof envelope;
    } catch {
      const said = proc.stderr().trim().split('\n').pop() || `exit ${code}`;
      throw new Error(`${name} failed: ${said}`);
    }
    if (code === 0 && envelope.ok) return envelope.result as T;
    const e = envelope.error ?? {};
    throw new Error(
      `${name} failed: ${e.message ?? `exit ${code}`}${e.code ? ` [${e.code}]` : ''}${e.fix ? ` (fix: ${e.fix})` : ''}`,
    );
  }
}

/**
 * Waits until the router answers the agent's health route without a credential with 401: the route exists
 * and reaches a listening agent (404 and 503 come before any credential is read).
 */
export async function waitForConsoleRoute(healthUrl: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last: string;
  for (;;) {
    try {
      const res = await fetch(healthUrl, { signal: AbortSignal.timeout(3000) });
      await res.body?.cancel();
      if (res.status === 401) return;
      last = `HTTP ${res.status}`;
    } catch (error) {
      last = (error as { cause?: { code?: string } }).cause?.code ?? (error as Error).name;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `the console route ${healthUrl} did not reach the agent within ${timeoutMs / 1000} s (${last})`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 500));
  }
}
