/**
 * The Workflow API client: resource methods for every public operation, the raw typed path client
 * (`workflow.raw.GET('/api/v1/…')`), auto-pagination, and `run()` — the five steps in one call.
 */
import createClient from 'openapi-fetch';
import type { Client } from 'openapi-fetch';
import { createTransport } from './core.js';
import type { ClientOptions } from './core.js';
import { verifyEnvelope } from './envelope.js';
import type { ExpectedEnvelope } from './envelope.js';
import {
  APIConnectionError,
  ArgumentError,
  NoRouteError,
  NotFoundError,
  RunAttentionError,
  RunFailedError,
  WaitTimeoutError,
} from './errors.js';
import type { RunAttention } from './errors.js';
import type { paths } from './generated/workflow.js';
import { PagePromise } from './pagination.js';
import { deadlineSignal, expectOk, idOf, signalOf, sleep, unwrap } from './request.js';
import type { RequestOptions } from './request.js';
import type {
  ApprovalDecision,
  ArtifactEnvelope,
  ArtifactPublishParams,
  BodyOf,
  Contract,
  ContractCreateParams,
  ContractUpdateParams,
  DataOf,
  Invocation,
  InvocationCreateParams,
  InvocationSummary,
  LaunchReport,
  Preflight,
  PreflightParams,
  QueryOf,
  ResolveParams,
  ResolveResult,
} from './types.js';

export type WorkflowPaths = paths;
export type RawWorkflowClient = Client<paths>;

export interface WorkflowClientOptions extends ClientOptions {
  /** The project used when a call does not name one (`projectId` in its options). */
  projectId?: string;
  /** The workspace used by artifact schema calls when they do not name one. */
  workspaceId?: string;
}

export interface CreateInvocationOptions extends RequestOptions {
  /**
   * A stable key for this logical request (1–255 printable ASCII). When absent the SDK generates one and
   * reuses it for its own retries; pass your own to make retries across process restarts safe too.
   */
  idempotencyKey?: string;
  /** Sent as `X-Correlation-ID` and stored with the invocation. */
  correlationId?: string;
}

export interface CreatedInvocation {
  invocation: Invocation;
  /** True when the key had already been used for this same request and the original invocation came back. */
  replayed: boolean;
}

export interface WaitOptions extends RequestOptions {
  /** The most the wait may take, in milliseconds (required: the caller decides). */
  timeoutMs: number;
  /** First delay between polls (default 250 ms), growing by half each time up to `maxIntervalMs` (2 s). */
  intervalMs?: number;
  maxIntervalMs?: number;
  /** Attention signals to keep waiting through (default none: they fail fast with `RunAttentionError`). */
  waitFor?: readonly RunAttention[] | 'all';
  /** Called with each new state of the invocation. */
  onState?: (invocation: Invocation) => void;
}

export interface RunOptions extends Omit<WaitOptions, 'projectId'> {
  projectId?: string;
  idempotencyKey?: string;
  correlationId?: string;
  /** Extra fields of the invocation (metadata, required capabilities, a pinned contract). */
  invocation?: Omit<InvocationCreateParams, 'intent'>;
  /** The artifact schema the caller understands; the envelope is refused otherwise. */
  schema?: ExpectedEnvelope['schema'];
}

export interface RunResult<T = unknown> {
  resolution: ResolveResult;
  invocation: Invocation;
  launch: LaunchReport;
  /** The verified envelope (identities checked, payload hash recomputed). */
  envelope: ArtifactEnvelope<T>;
  /** `envelope.payload`, typed by the caller (`run<MyReport>()`). */
  payload: T;
  /** True when the idempotency key had been used before and the original invocation was continued. */
  replayed: boolean;
}

const ATTENTIONS: readonly RunAttention[] = ['blocked', 'approval_required', 'artifact_rejected'];

function requireId(value: string | undefined, name: 'projectId' | 'workspaceId'): string {
  if (!value) {
    throw new ArgumentError(
      name === 'projectId' ? 'project_id_required' : 'workspace_id_required',
      name,
      `${name} is required: pass it in the client's options (new Workflow({ ${name}: … })) or in the call's`,
    );
  }
  return value;
}

export class Workflow {
  /** The typed path client (openapi-fetch) over the same transport: timeouts, retries and credentials apply. */
  readonly raw: RawWorkflowClient;
  readonly contracts: Contracts;
  readonly invocations: Invocations;
  readonly artifactSchemas: ArtifactSchemas;
  readonly subscriptions: Subscriptions;
  readonly deliveries: Deliveries;
  /** @internal */
  readonly defaults: { projectId: string | undefined; workspaceId: string | undefined };

  constructor(options: WorkflowClientOptions) {
    const transport = createTransport(options);
    this.raw = createClient<paths>({ baseUrl: transport.baseUrl, fetch: transport.fetch });
    this.defaults = { projectId: options.projectId, workspaceId: options.workspaceId };
    this.contracts = new Contracts(this);
    this.invocations = new Invocations(this);
    this.artifactSchemas = new ArtifactSchemas(this);
    this.subscriptions = new Subscriptions(this);
    this.deliveries = new Deliveries(this);
  }

  /**
   * Starts a governed run: creates the invocation (idempotent, under your `idempotencyKey` or a generated one)
   * and launches it. Returns its handle at once; keep `handle.id` to resume it later with
   * {@link Workflow.handle}, even from another process. A route that cannot launch throws `ConflictError`
   * `launch_blocked` with typed `blockers`.
   */
  async start(intent: string, options: StartOptions = {}): Promise<InvocationHandle> {
    checkIntent(intent);
    const projectId = this.project(options);
    const call = { ...options, projectId };
    const created = await this.invocations.create({ ...options.invocation, intent }, call);
    const id = created.invocation.invocation_id;
    const launched = await this.invocations.launchWithReport(id, {
      projectId,
      ...(options.signal ? { signal: options.signal } : {}),
    });
    return new InvocationHandle(this, projectId, id, {
      invocation: launched.invocation,
      launch: launched.launch,
      replayed: created.replayed,
    });
  }

  /** The handle of an invocation started earlier (its persisted `id`), in this client's or the given project. */
  handle(invocationId: string, options: { projectId?: string } = {}): InvocationHandle {
    if (typeof invocationId !== 'string' || !/^[a-z]+_[A-Za-z0-9]+$/.test(invocationId)) {
      throw new ArgumentError('argument_invalid', 'invocationId', 'invocationId must be an id like inv_…');
    }
    return new InvocationHandle(this, this.project(options), invocationId);
  }

  /** @internal */
  project(options?: RequestOptions): string {
    return requireId(options?.projectId ?? this.defaults.projectId, 'projectId');
  }

  /**
   * The five steps in one call: resolve the intent, invoke, launch, wait for the artifact and verify its
   * envelope. Fails fast with {@link RunAttentionError} when the run is blocked, awaits approval or had its
   * artifact rejected (unless `waitFor` names it), {@link RunFailedError} when it fails or is cancelled,
   * {@link NoRouteError} when no contract matches, and {@link WaitTimeoutError} at `timeoutMs`.
   */
  async run<T = unknown>(intent: string, options: RunOptions): Promise<RunResult<T>> {
    checkIntent(intent);
    const timeoutMs = checkTimeout(options?.timeoutMs);
    const projectId = this.project(options);
    const startedAt = Date.now();
    let last: Invocation | undefined;
    const bound = deadlineSignal(
      options.signal,
      timeoutMs,
      () => new WaitTimeoutError(timeoutMs, 'run', last),
    );
    const call = { projectId, signal: bound.signal };
    try {
      const resolution = await this.contracts.resolve({ intent, ...pickResolve(options.invocation) }, call);
      if (!resolution.matched) throw new NoRouteError(intent);
      const created = await this.invocations.create(
        { ...options.invocation, intent },
        {
          ...call,
          ...(options.idempotencyKey ? { idempotencyKey: options.idempotencyKey } : {}),
          ...(options.correlationId ? { correlationId: options.correlationId } : {}),
        },
      );
      last = created.invocation;
      const launched = await this.invocations.launchWithReport(created.invocation.invocation_id, call);
      last = launched.invocation;
      const waited = await this.invocations.waitForArtifact<T>(
        created.invocation.invocation_id,
        {
          ...options,
          ...call,
          timeoutMs: Math.max(1, timeoutMs - (Date.now() - startedAt)),
          onState: (invocation) => {
            last = invocation;
            options.onState?.(invocation);
          },
        },
        launched.invocation,
      );
      const envelope = await verifyEnvelope<T>(waited.envelope, {
        projectId,
        invocationId: created.invocation.invocation_id,
        ...(waited.invocation.run_id ? { runId: waited.invocation.run_id } : {}),
        ...(options.schema ? { schema: options.schema } : {}),
      });
      return {
        resolution,
        invocation: waited.invocation,
        launch: launched.launch,
        envelope,
        payload: envelope.payload,
        replayed: created.replayed,
      };
    } catch (error) {
      if (bound.signal.aborted && !options.signal?.aborted) {
        throw bound.signal.reason instanceof WaitTimeoutError
          ? new WaitTimeoutError(timeoutMs, 'run', last)
          : bound.signal.reason;
      }
      throw error;
    } finally {
      bound.dispose();
    }
  }
}

function pickResolve(params: RunOptions['invocation']): Omit<ResolveParams, 'intent'> {
  return {
    ...(params?.required_capabilities ? { required_capabilities: params.required_capabilities } : {}),
    ...(params?.metadata ? { metadata: params.metadata } : {}),
  };
}

class Resource {
  constructor(protected readonly client: Workflow) {}
  protected get raw(): RawWorkflowClient {
    return this.client.raw;
  }
  protected project(options?: RequestOptions): string {
    return this.client.project(options);
  }
  protected workspace(options?: RequestOptions & { workspaceId?: string }): string {
    return requireId(options?.workspaceId ?? this.client.defaults.workspaceId, 'workspaceId');
  }
}

export class Contracts extends Resource {
  /** Every contract of the project (active only unless `include_inactive`), in creation order. */
  list(
    query: Omit<QueryOf<'listWorkflowContracts'>, 'cursor'> & { cursor?: string } = {},
    options?: RequestOptions,
  ): PagePromise<Contract> {
    // A missing id rejects the list's promise (reaching `.catch`) instead of throwing at the call.
    return new PagePromise(async (cursor) => {
      const projectId = this.project(options);
      const result = await this.raw.GET('/api/v1/projects/{projectId}/workflow/contracts', {
        params: { path: { projectId }, query: { ...query, ...(cursor ? { cursor } : {}) } },
        ...signalOf(options),
      });
      return { data: unwrap(result), nextCursor: result.data?.next_cursor ?? null };
    }, query.cursor);
  }

  async create(body: ContractCreateParams, options?: RequestOptions): Promise<Contract> {
    return unwrap(
      await this.raw.POST('/api/v1/projects/{projectId}/workflow/contracts', {
        params: { path: { projectId: this.project(options) } },
        body,
        ...signalOf(options),
      }),
    );
  }

  async get(contractId: string, options?: RequestOptions): Promise<Contract> {
    return unwrap(
      await this.raw.GET('/api/v1/projects/{projectId}/workflow/contracts/{contractId}', {
        params: { path: { projectId: this.project(options), contractId: idOf(contractId, 'contractId') } },
        ...signalOf(options),
      }),
    );
  }

  async update(contractId: string, body: ContractUpdateParams, options?: RequestOptions): Promise<Contract> {
    return unwrap(
      await this.raw.PATCH('/api/v1/projects/{projectId}/workflow/contracts/{contractId}', {
        params: { path: { projectId: this.project(options), contractId: idOf(contractId, 'contractId') } },
        body,
        ...signalOf(options),
      }),
    );
  }

  /** Step 1, Resolve: which contract an intent matches, with the full explanation. Creates nothing. */
  async resolve(body: ResolveParams, options?: RequestOptions): Promise<ResolveResult> {
    return unwrap(
      await this.raw.POST('/api/v1/projects/{projectId}/workflow/resolve-intent', {
        params: { path: { projectId: this.project(options) } },
        body,
        ...signalOf(options),
      }),
    );
  }
}

export class Invocations extends Resource {
  /** Step 2, Preflight: read-only launch readiness (`can_launch`, typed blockers). */
  async preflight(body: PreflightParams, options?: RequestOptions): Promise<Preflight> {
    return unwrap(
      await this.raw.POST('/api/v1/projects/{projectId}/workflow/preflight', {
        params: { path: { projectId: this.project(options) } },
        body,
        ...signalOf(options),
      }),
    );
  }

  /**
   * Step 3, Invoke. Always idempotent: the key is yours or generated, and reused by automatic retries. A key
   * reused for a different request throws `IdempotencyError`.
   */
  async create(body: InvocationCreateParams, options?: CreateInvocationOptions): Promise<CreatedInvocation> {
    const header: { 'Idempotency-Key': string; 'X-Correlation-ID'?: string } = {
      // The transport fills in a generated key when this is empty.
      'Idempotency-Key': options?.idempotencyKey ?? '',
      ...(options?.correlationId !== undefined ? { 'X-Correlation-ID': options.correlationId } : {}),
    };
    if (!header['Idempotency-Key']) delete (header as { 'Idempotency-Key'?: string })['Idempotency-Key'];
    const result = await this.raw.POST('/api/v1/projects/{projectId}/workflow/invocations', {
      params: { path: { projectId: this.project(options) }, header },
      body,
      ...signalOf(options),
    });
    const invocation = unwrap(result);
    return {
      invocation,
      replayed:
        result.response.status === 200 && result.response.headers.get('idempotent-replayed') === 'true',
    };
  }

  async get(invocationId: string, options?: RequestOptions): Promise<Invocation> {
    return unwrap(
      await this.raw.GET('/api/v1/projects/{projectId}/workflow/invocations/{invocationId}', {
        params: {
          path: { projectId: this.project(options), invocationId: idOf(invocationId, 'invocationId') },
        },
        ...signalOf(options),
      }),
    );
  }

  /** The project's invocations, newest first; `for await` walks every page. */
  list(
    query: Omit<QueryOf<'listInvocations'>, 'cursor'> & { cursor?: string } = {},
    options?: RequestOptions,
  ): PagePromise<InvocationSummary> {
    // A missing id rejects the list's promise (reaching `.catch`) instead of throwing at the call.
    return new PagePromise(async (cursor) => {
      const projectId = this.project(options);
      const result = await this.raw.GET('/api/v1/projects/{projectId}/workflow/invocations', {
        params: { path: { projectId }, query: { ...query, ...(cursor ? { cursor } : {}) } },
        ...signalOf(options),
      });
      return { data: unwrap(result), nextCursor: result.data?.next_cursor ?? null };
    }, query.cursor);
  }

  /** Step 4, Launch. A route that is not ready throws `ConflictError` `launch_blocked` with typed `blockers`. */
  async launch(invocationId: string, options?: RequestOptions): Promise<Invocation> {
    return (await this.launchWithReport(invocationId, options)).invocation;
  }

  /** Launch, with what it did (`launch.outcome`: accepted, accepted_waiting_for_owner, reconciling, terminal). */
  async launchWithReport(
    invocationId: string,
    options?: RequestOptions,
  ): Promise<{ invocation: Invocation; launch: LaunchReport }> {
    const result = await this.raw.POST(
      '/api/v1/projects/{projectId}/workflow/invocations/{invocationId}/launch',
      {
        params: {
          path: { projectId: this.project(options), invocationId: idOf(invocationId, 'invocationId') },
        },
        ...signalOf(options),
      },
    );
    const invocation = unwrap(result);
    return { invocation, launch: result.data!.launch };
  }

  /** Cancels an invocation that is not terminal (a cancelled one comes back unchanged). */
  async cancel(
    invocationId: string,
    body: BodyOf<'cancelInvocation'> = {},
    options?: RequestOptions,
  ): Promise<Invocation> {
    return unwrap(
      await this.raw.POST('/api/v1/projects/{projectId}/workflow/invocations/{invocationId}/cancel', {
        params: {
          path: { projectId: this.project(options), invocationId: idOf(invocationId, 'invocationId') },
        },
        body,
        ...signalOf(options),
      }),
    );
  }

  /**
   * Retries a failed or cancelled invocation: a new invocation of the same request (`retry_of` names the
   * original, whose `retried_as` lists it). Keyed like `create` (the key is yours or generated, and reused by
   * automatic retries); any other state throws `ConflictError` `invocation_not_retryable`.
   */
  async retry(invocationId: string, options?: CreateInvocationOptions): Promise<CreatedInvocation> {
    const header: { 'Idempotency-Key'?: string; 'X-Correlation-ID'?: string } = {
      ...(options?.idempotencyKey ? { 'Idempotency-Key': options.idempotencyKey } : {}),
      ...(options?.correlationId !== undefined ? { 'X-Correlation-ID': options.correlationId } : {}),
    };
    const result = await this.raw.POST(
      '/api/v1/projects/{projectId}/workflow/invocations/{invocationId}/retry',
      {
        params: {
          path: { projectId: this.project(options), invocationId },
          header: header as { 'Idempotency-Key': string },
        },
        ...signalOf(options),
      },
    );
    const invocation = unwrap(result);
    return {
      invocation,
      replayed:
        result.response.status === 200 && result.response.headers.get('idempotent-replayed') === 'true',
    };
  }

  /** Approves or rejects a run held for approval (needs a participant token of an owner or admin). */
  async decideApproval(
    invocationId: string,
    body: { decision: ApprovalDecision; comment?: string },
    options?: RequestOptions,
  ): Promise<Invocation> {
    return unwrap(
      await this.raw.POST('/api/v1/projects/{projectId}/workflow/invocations/{invocationId}/approval', {
        params: {
          path: { projectId: this.project(options), invocationId: idOf(invocationId, 'invocationId') },
        },
        body,
        ...signalOf(options),
      }),
    );
  }

  /** Step 5, Consume: the artifact envelope (`NotFoundError` `artifact_not_found` until one is published). */
  async artifact<T = unknown>(invocationId: string, options?: RequestOptions): Promise<ArtifactEnvelope<T>> {
    const envelope = unwrap(
      await this.raw.GET('/api/v1/projects/{projectId}/workflow/invocations/{invocationId}/artifact', {
        params: {
          path: { projectId: this.project(options), invocationId: idOf(invocationId, 'invocationId') },
        },
        ...signalOf(options),
      }),
    );
    // As sent: the payload is what the pinned schema describes (`verifyEnvelope` checks its hash).
    return envelope as ArtifactEnvelope<T>;
  }

  /** Publishes an invocation's result with a key holding `workflow-artifacts:write`. */
  async publishArtifact(
    invocationId: string,
    body: ArtifactPublishParams,
    options?: RequestOptions,
  ): Promise<{ envelope: ArtifactEnvelope; replayed: boolean }> {
    const result = await this.raw.POST(
      '/api/v1/projects/{projectId}/workflow/invocations/{invocationId}/artifact',
      {
        params: {
          path: { projectId: this.project(options), invocationId: idOf(invocationId, 'invocationId') },
        },
        body,
        ...signalOf(options),
      },
    );
    return { envelope: unwrap(result), replayed: result.response.status === 200 };
  }

  /**
   * Reads the invocation, holding the answer on the server for up to `waitSeconds` (at most 60) until its state
   * or attention differs from `seen` (or from what it was when the request arrived). No polling: the server
   * answers as soon as the invocation changes, or at the end of the wait with it unchanged.
   */
  async waitForChange(
    invocationId: string,
    options: RequestOptions & {
      waitSeconds: number;
      seen?: Pick<Invocation, 'state' | 'attention'>;
    },
  ): Promise<Invocation> {
    const wait = Math.max(0, Math.min(MAX_WAIT_SECONDS, Math.floor(options.waitSeconds)));
    return unwrap(
      await this.raw.GET('/api/v1/projects/{projectId}/workflow/invocations/{invocationId}', {
        params: {
          path: { projectId: this.project(options), invocationId: idOf(invocationId, 'invocationId') },
          query: {
            wait,
            ...(options.seen ? { state: options.seen.state, attention: options.seen.attention } : {}),
          },
        },
        ...signalOf({
          ...options,
          // The attempt must outlast the server's hold.
          timeoutMs: Math.max(options.timeoutMs ?? 0, wait * 1000 + WAIT_GRACE_MS),
        }),
      }),
    );
  }

  /**
   * Waits until the invocation is `completed` with an artifact and returns both (the envelope as sent: check
   * it with `verifyEnvelope`, as `run()` does). The server holds each read until the invocation changes
   * (`?wait=`), so nothing is polled. Throws {@link RunFailedError} on `failed`/`cancelled`,
   * {@link RunAttentionError} on attention not in `waitFor`, and {@link WaitTimeoutError} at `timeoutMs`
   * (`Infinity` waits until the run ends or `signal` aborts). Connection errors and 5xx after the client's own
   * retries are waited through.
   */
  async waitForArtifact<T = unknown>(
    invocationId: string,
    options: WaitOptions,
    /** @internal The invocation as the caller last read it (a launch's answer): the first read waits on it. */
    known?: Invocation,
  ): Promise<{ invocation: Invocation; envelope: ArtifactEnvelope<T> }> {
    const timeoutMs = checkTimeout(options.timeoutMs);
    const projectId = this.project(options);
    const waitFor = options.waitFor === 'all' ? ATTENTIONS : (options.waitFor ?? []);
    let last: Invocation | undefined;
    const bound = deadlineSignal(
      options.signal,
      timeoutMs,
      () => new WaitTimeoutError(timeoutMs, 'artifact wait', last),
    );
    const deadline = Date.now() + timeoutMs;
    const call = { projectId, signal: bound.signal };
    let seen = '';
    let backoff = options.intervalMs ?? 250;
    let pace = backoff;
    // What the caller already read is taken as the first read: no request just to see it again.
    let given = known;
    try {
      for (;;) {
        let invocation: Invocation | undefined;
        if (given) {
          invocation = given;
          given = undefined;
        } else {
          try {
            const left = (deadline - Date.now()) / 1000;
            const asked = Date.now();
            invocation = last
              ? await this.waitForChange(invocationId, {
                  ...call,
                  waitSeconds: Math.max(1, Math.min(MAX_WAIT_SECONDS, Math.ceil(left))),
                  seen: last,
                })
              : await this.get(invocationId, call);
            backoff = options.intervalMs ?? 250;
            // A server that does not hold reads (an older one, or a proxy that answers from a cache) answers an
            // unchanged invocation at once: pace the reads as polling, the pause growing by half up to the cap,
            // rather than asking in a tight loop. A read the server held for its wait is not paced.
            const unchanged =
              last !== undefined &&
              invocation.state === last.state &&
              invocation.attention === last.attention;
            if (!unchanged) pace = options.intervalMs ?? 250;
            const pause = pace - (Date.now() - asked);
            if (unchanged && pause > 0) {
              await sleep(pause, bound.signal);
              pace = Math.min(options.maxIntervalMs ?? 2000, pace * 1.5);
            }
          } catch (error) {
            if (!isTransient(error) || bound.signal.aborted) throw error;
            // The service is unreachable for now: try again after a growing pause.
            await sleep(backoff, bound.signal);
            backoff = Math.min(options.maxIntervalMs ?? 2000, backoff * 2);
            continue;
          }
        }
        last = invocation;
        const key = `${invocation.state}|${invocation.attention}|${invocation.updated_at}`;
        if (key !== seen) {
          seen = key;
          options.onState?.(invocation);
        }
        if (invocation.state === 'failed' || invocation.state === 'cancelled')
          throw new RunFailedError(invocation);
        const attention = invocation.attention as RunAttention;
        if (ATTENTIONS.includes(attention) && !waitFor.includes(attention)) {
          throw new RunAttentionError(invocation, attention);
        }
        if (invocation.state === 'completed' && invocation.artifact) {
          for (;;) {
            try {
              const envelope = await this.artifact<T>(invocationId, call);
              return { invocation, envelope };
            } catch (error) {
              const pending = error instanceof NotFoundError && error.code === 'artifact_not_found';
              if (!(pending || isTransient(error)) || bound.signal.aborted) throw error;
              await sleep(backoff, bound.signal);
            }
          }
        }
      }
    } catch (error) {
      if (bound.signal.aborted && !options.signal?.aborted) {
        throw new WaitTimeoutError(timeoutMs, 'artifact wait', last);
      }
      throw error;
    } finally {
      bound.dispose();
    }
  }
}

/** The longest hold the server grants one read (`?wait=`, in seconds). */
const MAX_WAIT_SECONDS = 60;
/** How much longer than the server's hold a held read's attempt may take. */
const WAIT_GRACE_MS = 15_000;

/** An intent is a sentence: refused before sending when it is not a string with a word in it. */
function checkIntent(intent: unknown): void {
  if (typeof intent !== 'string' || intent.trim() === '') {
    throw new ArgumentError('argument_invalid', 'intent', 'intent must be a sentence saying what to do');
  }
}

/** A wait's timeout: positive milliseconds, or `Infinity` for no bound but the caller's signal. */

function checkTimeout(timeoutMs: number | undefined): number {
  if (timeoutMs === undefined) {
    throw new ArgumentError(
      'argument_invalid',
      'timeoutMs',
      'timeoutMs is required: the most the whole wait may take, in milliseconds (Infinity for no bound)',
    );
  }
  if (!(timeoutMs > 0)) {
    throw new ArgumentError(
      'argument_invalid',
      'timeoutMs',
      'timeoutMs is required and must be positive (Infinity for no bound)',
    );
  }
  return timeoutMs;
}

function isTransient(error: unknown): boolean {
  if (error instanceof APIConnectionError) return true;
  const status = (error as { status?: unknown })?.status;
  return typeof status === 'number' && (status >= 500 || status === 429 || status === 408);
}

export class ArtifactSchemas extends Resource {
  list(
    query: Omit<QueryOf<'listArtifactSchemas'>, 'cursor'> & { cursor?: string } = {},
    options?: RequestOptions & { workspaceId?: string },
  ): PagePromise<DataOf<'listArtifactSchemas'>[number]> {
    // A missing id rejects the list's promise (reaching `.catch`) instead of throwing at the call.
    return new PagePromise(async (cursor) => {
      const workspaceId = this.workspace(options);
      const result = await this.raw.GET('/api/v1/workspaces/{workspaceId}/artifact-schemas', {
        params: { path: { workspaceId }, query: { ...query, ...(cursor ? { cursor } : {}) } },
        ...signalOf(options),
      });
      return { data: unwrap(result), nextCursor: result.data?.next_cursor ?? null };
    }, query.cursor);
  }

  async register(
    body: BodyOf<'registerArtifactSchema'>,
    options?: RequestOptions & { workspaceId?: string },
  ): Promise<DataOf<'registerArtifactSchema'>> {
    return unwrap(
      await this.raw.POST('/api/v1/workspaces/{workspaceId}/artifact-schemas', {
        params: { path: { workspaceId: this.workspace(options) } },
        body,
        ...signalOf(options),
      }),
    );
  }

  async get(
    schemaId: string,
    options?: RequestOptions & { workspaceId?: string },
  ): Promise<DataOf<'getArtifactSchema'>> {
    return unwrap(
      await this.raw.GET('/api/v1/workspaces/{workspaceId}/artifact-schemas/{schemaId}', {
        params: { path: { workspaceId: this.workspace(options), schemaId } },
        ...signalOf(options),
      }),
    );
  }

  async validate(
    schemaId: string,
    body: BodyOf<'validateArtifactPayload'>,
    options?: RequestOptions & { workspaceId?: string },
  ): Promise<DataOf<'validateArtifactPayload'>> {
    return unwrap(
      await this.raw.POST('/api/v1/workspaces/{workspaceId}/artifact-schemas/{schemaId}/validate', {
        params: { path: { workspaceId: this.workspace(options), schemaId } },
        body,
        ...signalOf(options),
      }),
    );
  }

  async deprecate(
    schemaId: string,
    options?: RequestOptions & { workspaceId?: string },
  ): Promise<DataOf<'deprecateArtifactSchema'>> {
    return unwrap(
      await this.raw.POST('/api/v1/workspaces/{workspaceId}/artifact-schemas/{schemaId}/deprecate', {
        params: { path: { workspaceId: this.workspace(options), schemaId } },
        ...signalOf(options),
      }),
    );
  }
}

export class Subscriptions extends Resource {
  async list(options?: RequestOptions): Promise<DataOf<'listDeliverySubscriptions'>> {
    return unwrap(
      await this.raw.GET('/api/v1/projects/{projectId}/workflow/delivery-subscriptions', {
        params: { path: { projectId: this.project(options) } },
        ...signalOf(options),
      }),
    );
  }

  /** Creates a subscription; the answer carries its `whsec_…` signing secret once — store it server-side. */
  async create(
    body: BodyOf<'createDeliverySubscription'>,
    options?: RequestOptions,
  ): Promise<DataOf<'createDeliverySubscription'>> {
    return unwrap(
      await this.raw.POST('/api/v1/projects/{projectId}/workflow/delivery-subscriptions', {
        params: { path: { projectId: this.project(options) } },
        body,
        ...signalOf(options),
      }),
    );
  }

  async get(subscriptionId: string, options?: RequestOptions): Promise<DataOf<'getDeliverySubscription'>> {
    return unwrap(
      await this.raw.GET('/api/v1/projects/{projectId}/workflow/delivery-subscriptions/{subscriptionId}', {
        params: {
          path: { projectId: this.project(options), subscriptionId: idOf(subscriptionId, 'subscriptionId') },
        },
        ...signalOf(options),
      }),
    );
  }

  async update(
    subscriptionId: string,
    body: BodyOf<'updateDeliverySubscription'>,
    options?: RequestOptions,
  ): Promise<DataOf<'updateDeliverySubscription'>> {
    return unwrap(
      await this.raw.PATCH('/api/v1/projects/{projectId}/workflow/delivery-subscriptions/{subscriptionId}', {
        params: {
          path: { projectId: this.project(options), subscriptionId: idOf(subscriptionId, 'subscriptionId') },
        },
        body,
        ...signalOf(options),
      }),
    );
  }

  async delete(subscriptionId: string, options?: RequestOptions): Promise<void> {
    expectOk(
      await this.raw.DELETE('/api/v1/projects/{projectId}/workflow/delivery-subscriptions/{subscriptionId}', {
        params: {
          path: { projectId: this.project(options), subscriptionId: idOf(subscriptionId, 'subscriptionId') },
        },
        ...signalOf(options),
      }),
    );
  }

  /** A new signing secret; the old one keeps verifying for the overlap the answer states. */
  async rotateSecret(
    subscriptionId: string,
    options?: RequestOptions,
  ): Promise<DataOf<'rotateDeliverySubscriptionSecret'>> {
    return unwrap(
      await this.raw.POST(
        '/api/v1/projects/{projectId}/workflow/delivery-subscriptions/{subscriptionId}/rotate-secret',
        {
          params: {
            path: {
              projectId: this.project(options),
              subscriptionId: idOf(subscriptionId, 'subscriptionId'),
            },
          },
          ...signalOf(options),
        },
      ),
    );
  }

  /**
   * Sends a signed `delivery_subscription.test` to the subscription's URL now and answers the attempt
   * (`succeeded`, `status_code`, `latency_ms`, `error` …); nothing is stored or retried.
   */
  async test(subscriptionId: string, options?: RequestOptions): Promise<DataOf<'testDeliverySubscription'>> {
    return unwrap(
      await this.raw.POST(
        '/api/v1/projects/{projectId}/workflow/delivery-subscriptions/{subscriptionId}/test',
        {
          params: {
            path: {
              projectId: this.project(options),
              subscriptionId: idOf(subscriptionId, 'subscriptionId'),
            },
          },
          ...signalOf(options),
        },
      ),
    );
  }
}

export class Deliveries extends Resource {
  list(
    query: Omit<QueryOf<'listDeliveries'>, 'cursor'> & { cursor?: string } = {},
    options?: RequestOptions,
  ): PagePromise<DataOf<'listDeliveries'>[number]> {
    // A missing id rejects the list's promise (reaching `.catch`) instead of throwing at the call.
    return new PagePromise(async (cursor) => {
      const projectId = this.project(options);
      const result = await this.raw.GET('/api/v1/projects/{projectId}/workflow/deliveries', {
        params: { path: { projectId }, query: { ...query, ...(cursor ? { cursor } : {}) } },
        ...signalOf(options),
      });
      return { data: unwrap(result), nextCursor: result.data?.next_cursor ?? null };
    }, query.cursor);
  }

  async get(deliveryId: string, options?: RequestOptions): Promise<DataOf<'getDelivery'>> {
    return unwrap(
      await this.raw.GET('/api/v1/projects/{projectId}/workflow/deliveries/{deliveryId}', {
        params: { path: { projectId: this.project(options), deliveryId: idOf(deliveryId, 'deliveryId') } },
        ...signalOf(options),
      }),
    );
  }

  async redeliver(deliveryId: string, options?: RequestOptions): Promise<DataOf<'redeliverDelivery'>> {
    return unwrap(
      await this.raw.POST('/api/v1/projects/{projectId}/workflow/deliveries/{deliveryId}/redeliver', {
        params: { path: { projectId: this.project(options), deliveryId: idOf(deliveryId, 'deliveryId') } },
        ...signalOf(options),
      }),
    );
  }

  async replay(
    body: BodyOf<'replayDeliveries'>,
    options?: RequestOptions,
  ): Promise<DataOf<'replayDeliveries'>> {
    return unwrap(
      await this.raw.POST('/api/v1/projects/{projectId}/workflow/deliveries/replay', {
        params: { path: { projectId: this.project(options) } },
        body,
        ...signalOf(options),
      }),
    );
  }
}

export interface StartOptions extends RequestOptions {
  /** A stable key for this logical request; the same key resumes the same invocation (see `create`). */
  idempotencyKey?: string;
  correlationId?: string;
  /** Extra fields of the invocation (metadata, required capabilities, a pinned contract). */
  invocation?: Omit<InvocationCreateParams, 'intent'>;
}

export interface HandleResultOptions extends Omit<WaitOptions, 'projectId' | 'timeoutMs'> {
  /** The most the wait may take, in milliseconds (required; `Infinity` waits until the run ends). */
  timeoutMs: number;
  /** The artifact schema the caller understands; the envelope is refused otherwise. */
  schema?: ExpectedEnvelope['schema'];
}

export interface HandleResult<T = unknown> {
  invocation: Invocation;
  /** The verified envelope (identities checked, payload hash recomputed). */
  envelope: ArtifactEnvelope<T>;
  /** `envelope.payload`, typed by the caller (`handle.result<MyReport>()`). */
  payload: T;
}

/**
 * One invocation, started by {@link Workflow.start} or resumed by {@link Workflow.handle}: persist `id` and come
 * back to it later. `result()` waits on the server (held reads, no polling) and verifies the envelope.
 */
export class InvocationHandle {
  /** What `start()` saw: the invocation after its launch, the launch report, whether the key was replayed. */
  readonly started: { invocation: Invocation; launch: LaunchReport; replayed: boolean } | undefined;

  constructor(
    private readonly client: Workflow,
    /** The invocation's project. */
    readonly projectId: string,
    /** The invocation id (`inv_…`): persist it to resume the handle with `workflow.handle(id)`. */
    readonly id: string,
    started?: { invocation: Invocation; launch: LaunchReport; replayed: boolean },
  ) {
    this.started = started;
  }

  /** The invocation now. */
  get(options?: Omit<RequestOptions, 'projectId'>): Promise<Invocation> {
    return this.client.invocations.get(this.id, { ...options, projectId: this.projectId });
  }

  /** The invocation once its state or attention changes, or after `waitSeconds` (at most 60) unchanged. */
  waitForChange(
    options: Omit<RequestOptions, 'projectId'> & {
      waitSeconds: number;
      seen?: Pick<Invocation, 'state' | 'attention'>;
    },
  ): Promise<Invocation> {
    return this.client.invocations.waitForChange(this.id, { ...options, projectId: this.projectId });
  }

  /**
   * The verified result: waits (server-side) until the invocation completes with an artifact and checks the
   * envelope. Same errors as `run()`: `RunAttentionError`, `RunFailedError`, `WaitTimeoutError`.
   */
  async result<T = unknown>(options: HandleResultOptions): Promise<HandleResult<T>> {
    const waited = await this.client.invocations.waitForArtifact<T>(this.id, {
      ...options,
      projectId: this.projectId,
    });
    const envelope = await verifyEnvelope<T>(waited.envelope, {
      projectId: this.projectId,
      invocationId: this.id,
      ...(waited.invocation.run_id ? { runId: waited.invocation.run_id } : {}),
      ...(options.schema ? { schema: options.schema } : {}),
    });
    return { invocation: waited.invocation, envelope, payload: envelope.payload };
  }

  /** Cancels the invocation (a cancelled one comes back unchanged; retried safely). */
  cancel(
    body: BodyOf<'cancelInvocation'> = {},
    options?: Omit<RequestOptions, 'projectId'>,
  ): Promise<Invocation> {
    return this.client.invocations.cancel(this.id, body, { ...options, projectId: this.projectId });
  }

  /** The handle as JSON: its id and project, enough to resume it. */
  toJSON(): { id: string; projectId: string } {
    return { id: this.id, projectId: this.projectId };
  }
}
