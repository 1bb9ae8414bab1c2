import type { AgentActor } from '@svc/auth';
import { randomBytes } from 'node:crypto';
import { unwrap } from '@svc/contracts';
import { newId } from '@svc/service-kit';
import type { Prisma } from '../../src/generated/prisma/client';
import type { WorkflowTestStack } from './stack';

/**
 * The data of an invocation row as a test writes it with Prisma: the columns every row needs, for workspace
 * `wks_1` and project `prj_1`, then `overrides`.
 */
export function invocationRow(
  id: string,
  overrides: Partial<Prisma.InvocationUncheckedCreateInput> = {},
): Prisma.InvocationUncheckedCreateInput {
  return {
    id,
    workspaceId: 'wks_1',
    projectId: 'prj_1',
    idempotencyKey: `key-${id}`,
    fingerprint: 'f'.repeat(64),
    request: { intent: 'weekly report' },
    intent: 'Weekly report',
    createdByKind: 'api_key',
    keyExpiresAt: new Date('2026-12-29T05:00:00.000Z'),
    ...overrides,
  };
}

/** A complete template definition: one stage needing `capabilities`, pinning schema `report@1.0.0`. */
export function templateDefinition(capabilities: string[] = ['code']) {
  return {
    required_capabilities: capabilities,
    artifact_schema: { name: 'report', version: '1.0.0' },
    guardrails: { human_approval_required: false },
    stages: [{ key: 'build', title: 'Build it', required_capabilities: capabilities }],
  };
}

/** A project of the main workspace made through the hub's public API (fresh resolve caches per scenario). */
export async function newProject(s: WorkflowTestStack): Promise<{ id: string; code: string }> {
  const code = `P${randomBytes(4).toString('hex').toUpperCase()}`;
  const project = unwrap(
    await s.hub.POST('/api/v1/workspaces/{workspace}/projects', {
      params: { path: { workspace: s.workspace.slug } },
      body: { code, name: code },
    }),
  );
  return { id: project.id, code: project.code };
}

/** A contract with its template, written directly into the Workflow API's own database. */
export async function seedContract(
  s: WorkflowTestStack,
  projectId: string,
  options: {
    name?: string;
    priority?: number;
    intentContains?: string[];
    isActive?: boolean;
    templateKey?: string;
    templateVersion?: string;
    definition?: Record<string, unknown>;
  } = {},
) {
  const templateKey = options.templateKey ?? 'report-flow';
  const templateVersion = options.templateVersion ?? '1.0.0';
  const contract = await s.database.prisma.workflowContract.create({
    data: {
      id: newId('wfc'),
      workspaceId: s.workspace.id,
      projectId,
      name: options.name ?? 'Reports',
      priority: options.priority ?? 10,
      classifier: {
        intentContains: options.intentContains ?? ['weekly report'],
        requiredCapabilities: [],
        metadata: {},
      },
      templateKey,
      templateVersion,
      isActive: options.isActive ?? true,
    },
  });
  await s.database.prisma.workflowTemplate.upsert({
    where: { projectId_key_version: { projectId, key: templateKey, version: templateVersion } },
    update: {},
    create: {
      id: newId('wft'),
      projectId,
      key: templateKey,
      version: templateVersion,
      definition: (options.definition ?? templateDefinition()) as object,
    },
  });
  return contract;
}

export async function seedSchema(
  s: WorkflowTestStack,
  projectId: string,
  options: { name?: string; version?: string; deprecated?: boolean } = {},
) {
  return s.database.prisma.artifactSchema.create({
    data: {
      id: newId('ars'),
      workspaceId: s.workspace.id,
      projectId,
      name: options.name ?? 'report',
      version: options.version ?? '1.0.0',
      jsonSchema: { type: 'object' },
      schemaHash: randomBytes(32).toString('hex'),
      deprecatedAt: options.deprecated ? new Date() : null,
    },
  });
}

/** Row counts of every table of the workflow database (to prove an operation wrote nothing). */
export async function countAllRows(s: WorkflowTestStack): Promise<Record<string, number>> {
  const tables = await s.database.prisma.$queryRaw<{ table_name: string }[]>`
    SELECT table_name FROM information_schema.tables
    WHERE table_schema = 'public' AND table_type = 'BASE TABLE' ORDER BY table_name`;
  const counts: Record<string, number> = {};
  for (const { table_name: table } of tables) {
    const rows = await s.database.prisma.$queryRawUnsafe<{ n: bigint }[]>(
      `SELECT count(*) AS n FROM "${table.replace(/"/g, '""')}"`,
    );
    counts[table] = Number(rows[0]?.n ?? 0);
  }
  return counts;
}

/** Deterministic pseudo-random JSON values and shapes for fuzzing request bodies. */
export function fuzzBodies(count: number, seed = 42): unknown[] {
  let state = seed;
  const rand = () => {
    state = (state * 1103515245 + 12345) % 2 ** 31;
    return state / 2 ** 31;
  };
  const pick = <T>(items: T[]): T => items[Math.floor(rand() * items.length)] as T;
  const value = (depth: number): unknown => {
    const kind = pick(['string', 'number', 'bool', 'null', 'array', 'object', 'long', 'unicode']);
    if (depth > 2 && (kind === 'array' || kind === 'object')) return 'x';
    switch (kind) {
      case 'string':
        return rand() < 0.5 ? '' : 'weekly report';
      case 'number':
        return pick([0, -1, 1.5, 1e308, Number.MAX_SAFE_INTEGER]);
      case 'bool':
        return rand() < 0.5;
      case 'null':
        return null;
      case 'array':
        return Array.from({ length: Math.floor(rand() * 4) }, () => value(depth + 1));
      case 'long':
        return 'x'.repeat(5000);
      case 'unicode':
        return '\u0000\ud83d\ude00\u202e';
      default:
        return Object.fromEntries(
          Array.from({ length: Math.floor(rand() * 4) }, (_, i) => [
            pick([
              'intent',
              'metadata',
              'required_capabilities',
              'workflow_contract_id',
              `k${i}`,
              '__proto__',
            ]),
            value(depth + 1),
          ]),
        );
    }
  };
  const fields = [
    'intent',
    'required_capabilities',
    'metadata',
    'workflow_contract_id',
    'workflow_template_key',
    'workflow_template_version',
  ];
  return Array.from({ length: count }, (_, i) => {
    if (i % 5 === 0) return value(0);
    // Mostly-valid shapes with one field broken, so validation of each field is reached.
    const body: Record<string, unknown> = { intent: 'weekly report' };
    body[pick(fields)] = value(1);
    if (rand() < 0.3) body[`extra_${i}`] = value(1);
    if (rand() < 0.3) delete body.intent;
    return body;
  });
}

/** Starts a registered agent at the hub and heartbeats it `idle`: it is then running on the roster. */
export async function startAndHeartbeat(s: WorkflowTestStack, agentId: string): Promise<void> {
  await fetch(`${s.hubUrl}/api/v1/workspaces/${s.workspace.slug}/provider-credentials/local`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${s.adminToken}` },
    body: JSON.stringify({ secret: `local-${randomBytes(12).toString('hex')}` }),
  });
  const started = unwrap(
    await s.hub.POST('/api/v1/agents/{agentId}/start', {
      params: { path: { agentId } },
      body: { launch_path: 'direct' },
    }),
  );
  const res = await fetch(`${s.hubUrl}/api/v1/agents/me/heartbeat`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${started.agent_token}` },
    body: JSON.stringify({ status: 'idle' }),
  });
  expect(res.status).toBe(200);
}

/** An agent acting in `workspaceId`, as its token's actor, for the use cases called directly. */
export const agentActor = (agentId: string, workspaceId: string): AgentActor => ({
  kind: 'agent',
  agentId,
  workspaceId,
  runtimeInstanceId: null,
  scopes: [],
});

/**
 * A runtime host of the stack's workspace, registered through the hub's public API as its owner; `heartbeat`
 * sends one ready heartbeat (relay and console router ready), so the host counts as live for a while.
 */
export async function registerRuntimeHost(s: WorkflowTestStack, heartbeat: boolean): Promise<string> {
  const host = unwrap(
    await s.hub.POST('/api/v1/workspaces/{workspace}/runtime-hosts', {
      params: { path: { workspace: s.workspace.slug } },
      body: {
        name: `host-${randomBytes(4).toString('hex')}`,
        hostname: 'runtime-1.internal',
        workdir_root: '/srv/agents',
        console_public_base_url: 'https://console.example.test',
        relay_public_url: 'https://relay.example.test',
      } as never,
    }),
  );
  if (heartbeat) {
    const res = await fetch(`${s.hubUrl}/api/v1/runtime-hosts/${host.host.id}/heartbeat`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': await s.key(['runtime-hosts:write']) },
      body: JSON.stringify({ relay_ready: true, console_router_ready: true, runtime_version: '1.0.0' }),
    });
    expect(res.status).toBe(200);
  }
  return host.host.id;
}
