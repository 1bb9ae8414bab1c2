import { ApiError } from '@svc/contracts';
import type { Logger } from '@svc/service-kit';
import { backoffDelay, describeError, sleep, within, withRetry } from '../../domain/call-policy';
import type { RetryPolicy } from '../../domain/call-policy';
import { ProviderModelNotFoundError } from '../../domain/provider-model-not-found';
import { refreshDelayMs } from '../../domain/runtime-credential-schedule';
import type { HubAgent, PlatformApi } from '../../data/platform-api';
import type { RuntimeHome } from '../../data/runtime-home';

/** A runtime credential as the agent holds it (in memory only). */
export interface HeldRuntimeCredential {
  token: string;
  expiresAt: Date;
  /** Known once the hub has answered a refresh. */
  model?: string;
  authorizationSource?: string;
}

export interface ProviderRuntimeDeps {
  api: Pick<PlatformApi, 'getSelf' | 'refreshRuntimeCredential' | 'listProviderModels'>;
  logger: Logger;
  policy: RetryPolicy;
  /** Values that must never reach a log line (the agent token); the runtime credential is added to them. */
  secrets: string[];
  /** The credential the hub issued at start (`AGENT_RUNTIME_CREDENTIAL`), refreshed before it expires. */
  credential?: { token: string; expiresAt: Date } | undefined;
  /** Where the runtime keeps its state (`AGENT_RUNTIME_HOME`). */
  home?: RuntimeHome | undefined;
  /** Called once when the hub refuses the model on a refresh; the agent cannot go on with that runtime. */
  onProviderModelNotFound: (error: ProviderModelNotFoundError) => void;
  now?: () => number;
}

/**
 * The agent's provider runtime: which `provider/model` it uses and the runtime credential for it.
 *
 * At start (`prepare`), the model is the one the runtime home remembers, else the hub's (`GET
 * /api/v1/agents/me`); a remembered model that is not the hub's must still be in the hub's catalog, or the
 * start fails with `ProviderModelNotFoundError`. The model is then written to the runtime home.
 *
 * With a credential, it is refreshed through `POST /api/v1/agents/me/runtime-credential` at two thirds of its
 * life, retried with capped backoff on any failure but one: `provider_model_unsupported`, which is reported
 * once through `onProviderModelNotFound` and ends the refreshes. The newest credential is kept in memory and
 * never logged.
 */
export class ProviderRuntime {
  private readonly controller = new AbortController();
  private readonly now: () => number;
  private held: HeldRuntimeCredential | undefined;
  private obtainedAt = 0;
  private hubModel: string | null = null;
  private runtimeModel: string | null = null;
  private timer: NodeJS.Timeout | undefined;
  private refreshing: Promise<void> | undefined;

  constructor(private readonly deps: ProviderRuntimeDeps) {
    this.now = deps.now ?? Date.now;
  }

  /** Whether there is anything to do: a credential to refresh or a runtime home to keep. */
  get enabled(): boolean {
    return this.deps.credential !== undefined || this.deps.home !== undefined;
  }

  /** The newest runtime credential, if the agent was given one. */
  credential(): HeldRuntimeCredential | undefined {
    return this.held ? { ...this.held } : undefined;
  }

  /** The `provider/model` the runtime uses (null before `prepare` or when neither home nor hub names one). */
  model(): string | null {
    return this.runtimeModel;
  }

  /**
   * Settles the model (with the hub's answer to `GET /api/v1/agents/me` when the caller already has it),
   * writes the runtime home and schedules the first refresh. Hub calls are retried until they succeed or
   * `signal` aborts. Rejects with `ProviderModelNotFoundError` for a stale remembered model.
   */
  async prepare(self: HubAgent | undefined, signal: AbortSignal): Promise<void> {
    if (!this.enabled) return;
    const { api, logger, policy, home } = this.deps;
    const retry = { signal, policy, logger, secrets: this.secrets() };
    const agent = self ?? (await withRetry('agent self', (s) => api.getSelf(s), retry));
    this.hubModel = agent.model;
    let model = agent.model;
    if (home) {
      await home.prepare();
      const { state, problem } = await home.read();
      if (problem)
        logger.warn({ runtime_home: home.dir, problem }, 'runtime state not usable; it is rewritten');
      if (state && state.model !== agent.model) {
        const catalog = await withRetry('provider catalog', (s) => api.listProviderModels(s), retry);
        if (!catalog.some((entry) => entry.id === state.model)) {
          throw new ProviderModelNotFoundError({ model: state.model, source: 'runtime_home' });
        }
        logger.warn(
          { model: state.model, hub_model: agent.model },
          'the runtime home remembers another model than the hub; keeping it (clear the runtime home to follow the hub)',
        );
      }
      model = state?.model ?? agent.model;
      if (model) await home.write(model, new Date(this.now()));
    }
    this.runtimeModel = model;
    logger.info(
      {
        model,
        hub_model: agent.model,
        runtime_home: home?.dir ?? null,
        refreshes_runtime_credential: this.deps.credential !== undefined,
      },
      'provider runtime ready',
    );
    const given = this.deps.credential;
    if (given && !this.controller.signal.aborted) {
      this.held = { token: given.token, expiresAt: given.expiresAt };
      this.obtainedAt = this.now();
      this.schedule();
    }
  }

  /** Ends refreshes at once (one in flight is aborted) and resolves when none runs. */
  async stop(): Promise<void> {
    this.controller.abort(new Error('the agent is stopping'));
    if (this.timer) clearTimeout(this.timer);
    await this.refreshing;
  }

  private secrets(): string[] {
    return this.held ? [...this.deps.secrets, this.held.token] : [...this.deps.secrets];
  }

  private schedule(): void {
    const held = this.held;
    if (!held || this.controller.signal.aborted) return;
    const delay = refreshDelayMs(this.obtainedAt, held.expiresAt.getTime(), this.now());
    this.timer = setTimeout(() => {
      this.timer = undefined;
      this.refreshing = this.refresh().finally(() => (this.refreshing = undefined));
    }, delay);
    this.timer.unref();
  }

  private async refresh(): Promise<void> {
    const { api, logger, policy } = this.deps;
    const signal = this.controller.signal;
    for (let attempt = 1; !signal.aborted; attempt += 1) {
      try {
        const fresh = await within(signal, policy.requestTimeoutMs, (s) => api.refreshRuntimeCredential(s));
        this.held = {
          token: fresh.token,
          expiresAt: new Date(fresh.expires_at),
          model: fresh.model,
          authorizationSource: fresh.authorization_source,
        };
        this.obtainedAt = this.now();
        logger.info(
          {
            model: fresh.model,
            authorization_source: fresh.authorization_source,
            expires_at: fresh.expires_at,
            attempts: attempt,
          },
          'runtime credential refreshed',
        );
        await this.touchHome();
        this.schedule();
        return;
      } catch (error) {
        if (signal.aborted) return;
        if (error instanceof ApiError && error.code === 'provider_model_unsupported') {
          const suggested = (error.problem as { close_matches?: unknown } | undefined)?.close_matches;
          this.deps.onProviderModelNotFound(
            new ProviderModelNotFoundError({
              model: this.hubModel ?? this.runtimeModel ?? 'unknown',
              source: 'credential_refresh',
              closeMatches: Array.isArray(suggested) ? suggested.filter((m) => typeof m === 'string') : [],
            }),
          );
          return;
        }
        const delayMs = backoffDelay(attempt, policy);
        logger.warn(
          {
            attempt,
            retry_in_ms: delayMs,
            expires_at: this.held?.expiresAt.toISOString(),
            error: describeError(error, this.secrets()),
          },
          'runtime credential refresh failed; retrying',
        );
        await sleep(delayMs, signal).catch(() => undefined);
      }
    }
  }

  /** Records in the runtime home that the runtime is still using its model; a failure is only logged. */
  private async touchHome(): Promise<void> {
    const { home, logger } = this.deps;
    if (!home || !this.runtimeModel) return;
    try {
      await home.write(this.runtimeModel, new Date(this.now()));
    } catch (error) {
      logger.warn({ runtime_home: home.dir, error: describeError(error) }, 'runtime state not written');
    }
  }
}
