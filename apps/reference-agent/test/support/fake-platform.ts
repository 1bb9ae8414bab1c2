import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import type { AgentStageAssignment } from '../../src/domain/stage-handler';

/** One request the fake received, in arrival order. */
export interface RecordedCall {
  method: string;
  path: string;
  stageId?: string;
  body: unknown;
  at: number;
}

/** A canned answer that replaces the fake's own for one matching request. */
export interface Injection {
  method: string;
  /** Matched against the path without the query string. */
  path: RegExp;
  status: number;
  code?: string;
  /** How many requests it answers (default 1). */
  times?: number;
}

const OPEN_STATES = new Set(['assigned', 'claimed', 'blocked']);

interface Evidence {
  kind: string;
  content: unknown;
}

/**
 * A tiny in-memory stand-in for the hub and Workflow API routes the agent calls, over real sockets. It
 * checks the bearer token, long-polls the stage list, validates published payloads with ajv (draft 2020-12)
 * and records every call so tests can assert what the agent did, in which order.
 */
export class FakePlatform {
  readonly calls: RecordedCall[] = [];
  readonly stages = new Map<string, AgentStageAssignment>();
  readonly published = new Map<string, unknown>();
  /** Evidence stored per stage, whichever call brought it (…/evidence, a completion or a publication). */
  readonly evidence = new Map<string, { kind: string; content: unknown }[]>();
  readonly hubStatuses: string[] = [];
  /** Stages another agent took over: every call about them answers 409 `stage_reassigned`. */
  readonly reassigned = new Set<string>();
  /** The stage ids each claim-next answered, in order (one entry per call, empty when none was claimed). */
  readonly claimedNext: string[][] = [];
  /** Long polls currently held open (listings and claim-next calls), and how many ended because the client went away. */
  pendingPolls = 0;
  abandonedPolls = 0;
  /** Called when a stage completes (e.g. to assign the next stage of the run). */
  onComplete: ((stage: AgentStageAssignment) => void) | undefined;
  /** Served at `/.well-known/jwks.json` without a credential, as the hub does (console tests). */
  jwks: unknown;
  url = '';

  private readonly injections: Injection[] = [];
  private readonly pollWaiters = new Set<() => void>();
  private readonly ajv = (() => {
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    return ajv;
  })();
  private server: Server | undefined;
  private counter = 0;

  constructor(private readonly token: string) {}

  async start(): Promise<void> {
    this.server = createServer((req, res) => {
      void this.handle(req, res);
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    const { port } = this.server.address() as AddressInfo;
    this.url = `http://127.0.0.1:${port}`;
  }

  async close(): Promise<void> {
    for (const wake of this.pollWaiters) wake();
    const server = this.server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  /** Assigns a stage to the agent (wakes a pending long poll). */
  assign(overrides: Partial<AgentStageAssignment> = {}): AgentStageAssignment {
    this.counter += 1;
    const stage: AgentStageAssignment = {
      stage_id: `stg_${this.counter}`,
      invocation_id: 'inv_1',
      project_id: 'prj_1',
      run_id: 'run_1',
      key: `stage-${this.counter}`,
      title: `Stage ${this.counter}`,
      position: 1,
      stage_count: 1,
      is_final: true,
      state: 'assigned',
      handoff_id: `hnd_${this.counter}`,
      intent: 'Summarise last week of incidents for the on-call review.',
      required_capabilities: ['summarise'],
      artifact_schema: { name: 'report', version: '1.0.0', json_schema: { type: 'object' } },
      heartbeat_interval_seconds: 1,
      stall_after_seconds: 60,
      assigned_at: '2026-11-21T10:00:00.000Z',
      ...overrides,
    };
    this.stages.set(stage.stage_id, stage);
    for (const wake of this.pollWaiters) wake();
    return stage;
  }

  inject(injection: Injection): void {
    this.injections.push({ times: 1, ...injection });
  }

  callsFor(stageId: string, action?: string): RecordedCall[] {
    return this.calls.filter(
      (call) => call.stageId === stageId && (action === undefined || call.path.endsWith(`/${action}`)),
    );
  }

  private async handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'http://fake');
    const body = await readJson(req);
    const method = req.method ?? 'GET';
    const path = url.pathname;
    const stageMatch = /^\/api\/v1\/agents\/me\/workflow-stages\/([^/]+)\/([a-z]+)$/.exec(path);
    this.calls.push({ method, path, stageId: stageMatch?.[1], body, at: Date.now() });

    if (method === 'GET' && path === '/.well-known/jwks.json' && this.jwks !== undefined) {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(this.jwks));
      return;
    }
    if (req.headers.authorization !== `Bearer ${this.token}`) {
      return problem(res, 401, 'token_invalid', 'The bearer token is missing or invalid.');
    }
    const injected = this.injections.find(
      (i) => i.method === method && i.path.test(path) && (i.times ?? 0) > 0,
    );
    if (injected) {
      injected.times = (injected.times ?? 1) - 1;
      return problem(res, injected.status, injected.code ?? `http_${injected.status}`, 'Injected failure.');
    }

    if (method === 'GET' && path === '/api/v1/agents/me')
      return json(res, 200, { data: this.agent('online') });
    if (method === 'POST' && path === '/api/v1/agents/me/heartbeat') {
      const status = (body as { status?: string } | undefined)?.status ?? 'online';
      this.hubStatuses.push(status);
      return json(res, 200, { data: this.agent(status) });
    }
    if (method === 'GET' && path === '/api/v1/agents/me/workflow-stages') {
      return this.listStages(res, Number(url.searchParams.get('wait') ?? 0));
    }
    if (method === 'POST' && path === '/api/v1/agents/me/workflow-stages/claims') {
      return this.claimNext(
        res,
        Number(url.searchParams.get('wait') ?? 0),
        Number(url.searchParams.get('max') ?? 1),
      );
    }
    if (stageMatch)
      return this.stageAction(res, method, stageMatch[1] as string, stageMatch[2] as string, body);
    const artifactMatch = /^\/api\/v1\/projects\/([^/]+)\/workflow\/invocations\/([^/]+)\/artifact$/.exec(
      path,
    );
    if (method === 'POST' && artifactMatch) return this.publish(res, artifactMatch[2] as string, body);
    return problem(res, 404, 'route_not_found', 'No such route.');
  }

  private open(): AgentStageAssignment[] {
    return [...this.stages.values()].filter(
      (s) => OPEN_STATES.has(s.state) && !this.reassigned.has(s.stage_id),
    );
  }

  /** The agent's assigned stages, oldest assignment first, as the platform claims them. */
  private assigned(): AgentStageAssignment[] {
    return this.open()
      .filter((s) => s.state === 'assigned')
      .sort((a, b) => (a.assigned_at ?? '').localeCompare(b.assigned_at ?? ''));
  }

  /**
   * Waits up to `wait` seconds for an assignment (or the client to go away, answered true). Counted in
   * `pendingPolls` while it waits.
   */
  private async waitForAssignment(res: ServerResponse, wait: number): Promise<boolean> {
    this.pendingPolls += 1;
    let gone = false;
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.pollWaiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, wait * 1000);
      this.pollWaiters.add(done);
      res.once('close', () => {
        if (!res.writableEnded) gone = true;
        done();
      });
    });
    this.pendingPolls -= 1;
    // Only the response closing unanswered says the client went away (the request is destroyed once read).
    if (gone) {
      this.abandonedPolls += 1;
      return true;
    }
    return false;
  }

  private async listStages(res: ServerResponse, wait: number): Promise<void> {
    if (this.open().length === 0 && wait > 0 && (await this.waitForAssignment(res, wait))) return;
    json(res, 200, { data: this.open() });
  }

  /** As the platform does: claims up to `max` assigned stages, waiting once for an assignment when none is. */
  private async claimNext(res: ServerResponse, wait: number, max: number): Promise<void> {
    if (this.assigned().length === 0 && wait > 0 && (await this.waitForAssignment(res, wait))) return;
    const claimed = this.assigned().slice(0, max);
    for (const stage of claimed) stage.state = 'claimed';
    this.claimedNext.push(claimed.map((stage) => stage.stage_id));
    json(res, 200, { data: claimed });
  }

  private stageAction(res: ServerResponse, method: string, id: string, action: string, body: unknown): void {
    const stage = this.stages.get(id);
    if (!stage) return problem(res, 404, 'stage_not_found', 'No such stage.');
    if (this.reassigned.has(id)) return problem(res, 409, 'stage_reassigned', 'The stage was reassigned.');
    switch (`${method} ${action}`) {
      case 'POST claim':
        if (stage.state === 'completed') return problem(res, 409, 'stage_completed', 'Already completed.');
        stage.state = 'claimed';
        return json(res, 200, { data: stage });
      case 'POST heartbeat':
        return json(res, 200, { data: stage });
      case 'POST blocker':
        stage.state = 'blocked';
        return json(res, 200, { data: stage });
      case 'DELETE blocker':
        stage.state = 'claimed';
        return json(res, 200, { data: stage });
      case 'POST evidence': {
        const { kind, content } = body as { kind: string; content: unknown };
        this.keepEvidence(id, [{ kind, content }]);
        return json(res, 201, {
          data: {
            evidence_id: `evd_${this.calls.length}`,
            stage_id: id,
            kind,
            content,
            created_at: new Date().toISOString(),
          },
        });
      }
      case 'POST complete':
        // As the platform does: the evidence comes with the completion, none again on a repeated one.
        if (stage.state !== 'completed') {
          this.keepEvidence(id, (body as { evidence?: Evidence[] } | undefined)?.evidence);
          this.complete(stage);
        }
        return json(res, 200, { data: stage });
      default:
        return problem(res, 404, 'route_not_found', 'No such route.');
    }
  }

  private keepEvidence(stageId: string, items: Evidence[] | undefined): void {
    if (!items?.length) return;
    this.evidence.set(stageId, [...(this.evidence.get(stageId) ?? []), ...items]);
  }

  private complete(stage: AgentStageAssignment): void {
    stage.state = 'completed';
    this.onComplete?.(stage);
  }

  private publish(res: ServerResponse, invocationId: string, body: unknown): void {
    const stage = [...this.stages.values()].find((s) => s.invocation_id === invocationId && s.is_final);
    if (!stage) return problem(res, 404, 'invocation_not_found', 'No such invocation.');
    const { payload, summary, limitations, provenance, evidence } = body as {
      payload: unknown;
      summary?: string;
      limitations?: string[];
      provenance?: Record<string, unknown>;
      evidence?: Evidence[];
    };
    // The same payload again is a replay (200) that completes nothing.
    const replayed =
      this.published.has(invocationId) &&
      JSON.stringify(this.published.get(invocationId)) === JSON.stringify(payload);
    const validate = this.ajv.compile(stage.artifact_schema.json_schema);
    if (!validate(payload)) {
      const errors = (validate.errors ?? []).map((e) => ({
        location: `payload${e.instancePath}`,
        message: e.message ?? '',
      }));
      return problem(
        res,
        422,
        'artifact_schema_mismatch',
        'The payload does not match the artifact schema.',
        {
          errors,
        },
      );
    }
    if (!replayed) {
      // A new publication by the final stage's owner completes that stage, with its evidence.
      this.published.set(invocationId, payload);
      this.keepEvidence(stage.stage_id, evidence);
      if (OPEN_STATES.has(stage.state)) this.complete(stage);
    }
    return json(res, replayed ? 200 : 201, {
      data: {
        envelope_version: '1',
        artifact_id: 'art_1',
        workspace_id: 'wks_1',
        project_id: stage.project_id,
        invocation_id: invocationId,
        run_id: stage.run_id,
        schema: {
          schema_id: 'sch_1',
          name: stage.artifact_schema.name,
          version: stage.artifact_schema.version,
        },
        version: 1,
        summary: summary ?? '',
        payload,
        payload_sha256: '0'.repeat(64),
        provenance: {
          contract_id: null,
          template: { key: 'tpl', version: '1' },
          stages: [],
          correlation_id: null,
          producer: provenance ?? {},
        },
        limitations: limitations ?? [],
        created_by: { kind: 'agent', id: 'agt_1' },
        created_at: new Date().toISOString(),
      },
    });
  }

  private agent(status: string) {
    const now = new Date().toISOString();
    return {
      id: 'agt_1',
      workspace_id: 'wks_1',
      name: 'reference-agent',
      status,
      capabilities: ['summarise'],
      runtime_instance_id: 'rti_1',
      project_id: null,
      workdir: null,
      serve_port: null,
      console_route: null,
      model: null,
      last_heartbeat_at: now,
      started_at: now,
      stopped_at: null,
      evicted_at: null,
      created_at: now,
      updated_at: now,
    };
  }
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  const text = Buffer.concat(chunks).toString('utf8');
  return text ? JSON.parse(text) : undefined;
}

function json(res: ServerResponse, status: number, body: unknown): void {
  if (res.writableEnded || res.destroyed) return;
  res.writeHead(status, { 'content-type': 'application/json' });
  res.end(JSON.stringify(body));
}

function problem(
  res: ServerResponse,
  status: number,
  code: string,
  detail: string,
  extra: Record<string, unknown> = {},
): void {
  if (res.writableEnded || res.destroyed) return;
  res.writeHead(status, { 'content-type': 'application/problem+json' });
  res.end(
    JSON.stringify({
      type: `https://docs.svc.dev/problems/${code}`,
      title: 'Error',
      status,
      code,
      detail,
      ...extra,
    }),
  );
}
