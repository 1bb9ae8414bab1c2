import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createRemoteJwks, createTokenVerifier } from '@svc/auth';
import { unwrap } from '@svc/contracts';
import { eventually, freePort } from '@svc/testing';
import { HOST_LOST_SECONDS } from '../src/domain/host-readiness';
import { startPresenceSweeper } from '../src/workers/presence.worker';
import { startTestHub } from './support/harness';
import type { SeededMember, TestHub } from './support/harness';

/**
 * Two hub replicas on one database, each with its own process state (caches, key ring, spawn driver), and a
 * client alternating between them as behind a round-robin balancer: what a person or a host can see is the same
 * whichever replica answers, because it lives in Postgres (decision 92). Sign-in throttles across replicas are
 * proven by login-throttle-replicas.test.ts, API-key revocation by key-revocation.test.ts.
 */
jest.setTimeout(60_000);

let a: TestHub;
let b: TestHub;
let owner: SeededMember;

const SETTINGS = {
  HUB_MANAGED_PROVIDERS: ['local'],
  HUB_SPAWN_RELAY_TIMEOUT_SECONDS: 1,
  HUB_SPAWN_DEADLINE_SECONDS: 600,
  HUB_SPAWN_WAIT_SECONDS: 0,
  HUB_SPAWN_SWEEP_INTERVAL_SECONDS: 3600,
};

beforeAll(async () => {
  a = await startTestHub({ settings: SETTINGS });
  b = await startTestHub({ replicaOf: a });
  owner = await a.seedMember('owner');
}, 60_000);

afterAll(async () => {
  await Promise.all([a.hub.spawns.stop(), b.hub.spawns.stop()]);
  await b.close();
  await a.close();
});

async function call(hub: TestHub, method: string, path: string, token: string, body?: unknown) {
  const res = await fetch(`${hub.url}${path}`, {
    method,
    headers: {
      authorization: `Bearer ${token}`,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  const json = (text ? JSON.parse(text) : {}) as { code?: string; data?: Record<string, unknown> };
  return { status: res.status, code: json.code, data: json.data, retryAfter: res.headers.get('retry-after') };
}

describe('revocation', () => {
  test('when an owner demotes a member on one replica, then the other refuses the member at once, and after removal too', async () => {
    const ws = owner.workspace;
    const member = await a.seedMember('admin', ws);
    const keys = `/api/v1/workspaces/${ws.slug}/api-keys`;
    // The admin lists keys through B (an owner/admin operation), then is demoted through A.
    expect((await call(b, 'GET', keys, member.token)).status).toBe(200);
    const demoted = await call(
      a,
      'PATCH',
      `/api/v1/workspaces/${ws.slug}/members/${member.participantId}`,
      owner.token,
      {
        role: 'viewer',
      },
    );
    expect(demoted.status).toBe(200);
    // No waiting: B reads the membership from Postgres on every request.
    expect(await call(b, 'GET', keys, member.token)).toMatchObject({ status: 403, code: 'role_forbidden' });
    expect((await call(b, 'GET', `/api/v1/workspaces/${ws.slug}/projects`, member.token)).status).toBe(200);

    const removed = await call(
      b,
      'DELETE',
      `/api/v1/workspaces/${ws.slug}/members/${member.participantId}`,
      owner.token,
    );
    expect(removed.status).toBe(204);
    for (const replica of [a, b]) {
      const refused = await call(replica, 'GET', `/api/v1/workspaces/${ws.slug}/projects`, member.token);
      expect([403, 404]).toContain(refused.status);
    }
  });
});

describe('console tickets', () => {
  test('when a ticket is minted through one replica, then the JWKS of either replica verifies it, again within its 60 s', async () => {
    const agent = await a.seedAgent(owner.workspace.id);
    const verifierOf = (hub: TestHub) =>
      createTokenVerifier({
        issuer: hub.settings.HUB_PUBLIC_URL,
        getJwks: createRemoteJwks({ url: `${hub.url}/.well-known/jwks.json`, minRefreshIntervalMs: 0 }),
      });
    const verifiers = [verifierOf(a), verifierOf(b)];
    for (const [minter, other] of [
      [a, b],
      [b, a],
    ] as const) {
      const minted = await call(minter, 'POST', `/api/v1/agents/${agent.id}/console-tickets`, owner.token);
      expect(minted.status).toBe(201);
      const ticket = minted.data?.ticket as string;
      // Used twice through each replica's keys, as the console router and the agent reuse it (decision 57).
      for (const verifier of [...verifiers, ...verifiers]) {
        const verified = await verifier.verify(ticket, { audience: 'console' });
        expect(verified).toMatchObject({
          sub: owner.participantId,
          claims: { agent: agent.id, ws: owner.workspace.id },
        });
      }
      // The issuance is audited once, readable through the other replica.
      const jti = (await verifiers[0]!.verify(ticket, { audience: 'console' })).jti;
      const res = await fetch(
        `${other.url}/api/v1/workspaces/${owner.workspace.slug}/audit-events?action=console.ticket.issued`,
        { headers: { authorization: `Bearer ${owner.token}` } },
      );
      expect(res.status).toBe(200);
      const events = ((await res.json()) as { data: { data: { token_id?: string } }[] }).data;
      expect(events.filter((e) => e.data.token_id === jti)).toHaveLength(1);
    }
  });
});

describe('spawn limits (decision 84)', () => {
  let projectCode: string;
  let hostId: string;

  beforeAll(async () => {
    const project = await a.seedProject(owner.workspace.id);
    projectCode = project.code;
    // A spawn-ready host whose relay refuses connections: every spawn stays in progress, holding its place.
    const host = await a.seedHost(owner.workspace.id, {
      relayBindHost: '127.0.0.1',
      relayListenPort: await freePort(),
    });
    hostId = host.id;
    // The only host that takes spawns (an earlier test's agent has a host of its own).
    await a.database.prisma.runtimeHost.updateMany({
      where: { workspaceId: owner.workspace.id, id: { not: hostId } },
      data: { relayReady: false },
    });
    unwrap(
      await a.client({ token: owner.token }).PUT('/api/v1/workspaces/{workspace}/spawn-policy', {
        params: { path: { workspace: owner.workspace.slug } },
        body: {
          enabled: true,
          allowed_models: ['local/echo'],
          allowed_capabilities: ['code'],
          max_running_agents_per_host: 50,
        },
      }),
    );
  });

  const spawn = (hub: TestHub) =>
    call(hub, 'POST', `/api/v1/workspaces/${owner.workspace.slug}/agent-spawns`, owner.token, {
      project: projectCode,
      capabilities: ['code'],
    });
  const setLimits = (hub: TestHub, body: Record<string, number | null>) =>
    call(hub, 'PUT', `/api/v1/runtime-hosts/${hostId}/limits`, owner.token, body);
  const openSpawns = () =>
    a.database.prisma.agentSpawn.count({
      where: { runtimeInstanceId: hostId, state: { in: ['requested', 'in_progress'] } },
    });

  test('when spawns race through both replicas, then the host takes its limit of spawns in progress and no more; then its agent limit', async () => {
    expect((await setLimits(a, { max_concurrent_spawns: 2, max_agents: null })).status).toBe(200);
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => spawn(i % 2 === 0 ? a : b)));
    const accepted = answers.filter((r) => r.status === 201 || r.status === 202);
    const busy = answers.filter((r) => r.status === 429);
    expect(accepted).toHaveLength(2);
    expect(busy).toHaveLength(6);
    expect(busy.every((r) => r.code === 'spawn_host_busy' && r.retryAfter === '10')).toBe(true);
    expect(await openSpawns()).toBe(2);
    // Each replica answers the same now, whichever took the spawns.
    for (const hub of [a, b])
      expect(await spawn(hub)).toMatchObject({ status: 429, code: 'spawn_host_busy' });

    // Limits set through B apply on A: two spawns in progress count as two agents.
    expect((await setLimits(b, { max_concurrent_spawns: null, max_agents: 3 })).status).toBe(200);
    const more = await Promise.all([spawn(a), spawn(b), spawn(a), spawn(b)]);
    expect(more.filter((r) => r.status === 201 || r.status === 202)).toHaveLength(1);
    const full = more.filter((r) => r.status === 429);
    expect(full).toHaveLength(3);
    expect(full.every((r) => r.code === 'spawn_host_at_limit' && r.retryAfter === '30')).toBe(true);
    expect(await openSpawns()).toBe(3);
  });
});

describe('spawn sweeper', () => {
  test('when both replicas sweep lapsed spawns at once, then each spawn is sent to its relay once and ends once', async () => {
    const member = await a.seedMember('owner');
    const project = await a.seedProject(member.workspace.id);
    // A relay that refuses every spawn with a typed problem (a final answer): one call ends a spawn.
    const calls: string[] = [];
    const relay = createServer((req, res) => {
      let raw = '';
      req.setEncoding('utf8');
      req.on('data', (chunk: string) => (raw += chunk));
      req.on('end', () => {
        calls.push((JSON.parse(raw) as { spawn_id: string }).spawn_id);
        res.writeHead(409, { 'content-type': 'application/problem+json' });
        res.end(
          JSON.stringify({ type: 'about:blank', title: 'refused', status: 409, code: 'spawn_refused' }),
        );
      });
    });
    await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
    try {
      const host = await a.seedHost(member.workspace.id, {
        relayBindHost: '127.0.0.1',
        relayListenPort: (relay.address() as AddressInfo).port,
      });
      // Open spawns nobody holds, as a stopped hub leaves them.
      const ids = await Promise.all(
        Array.from({ length: 6 }, async () => {
          const id = `spw_${randomBytes(8).toString('hex')}`;
          const name = `lapsed-${randomBytes(4).toString('hex')}`;
          await a.database.prisma.agentSpawn.create({
            data: {
              id,
              workspaceId: member.workspace.id,
              projectId: project.id,
              runtimeInstanceId: host.id,
              state: 'in_progress',
              origin: 'api',
              requestFingerprint: id,
              name,
              model: 'local/echo',
              capabilities: ['code'],
              commandKey: 'default',
              relayRequest: { spawn_id: id },
              requestedBy: { kind: 'test', id: null },
              authorization: { source: 'participant' },
              deadlineAt: new Date(Date.now() + 600_000),
            },
          });
          return id;
        }),
      );
      for (let i = 0; i < 3; i += 1) await Promise.all([a.hub.spawns.sweep(), b.hub.spawns.sweep()]);
      await eventually(
        async () =>
          (await a.database.prisma.agentSpawn.count({ where: { id: { in: ids }, state: 'failed' } })) ===
          ids.length,
        15_000,
        'every lapsed spawn ended',
      );
      await Promise.all([a.hub.spawns.sweep(), b.hub.spawns.sweep()]);
      await Promise.all(
        ids.flatMap((id) => [a.hub.spawns.settle(id, 5_000), b.hub.spawns.settle(id, 5_000)]),
      );
      expect([...calls].sort()).toEqual([...ids].sort());
      const ended = await a.database.prisma.auditEvent.findMany({
        where: { action: 'agent.spawn.failed', targetId: { in: ids } },
      });
      expect(ended.map((e) => e.targetId).sort()).toEqual([...ids].sort());
    } finally {
      relay.closeAllConnections();
      await new Promise<void>((resolve) => relay.close(() => resolve()));
    }
  });
});

describe('presence sweep (decision 83)', () => {
  test('when both replicas sweep at once, then every silent agent and host is marked lost, each audited once', async () => {
    const workspaceId = (await a.seedMember('owner')).workspace.id;
    const stale = new Date(Date.now() - (HOST_LOST_SECONDS + 60) * 1000);
    const silentHost = await a.seedHost(workspaceId, { lastHeartbeatAt: stale });
    const liveHost = await a.seedHost(workspaceId);
    const onSilentHost = await Promise.all(
      Array.from({ length: 4 }, () => a.seedAgent(workspaceId, { runtimeInstanceId: silentHost.id })),
    );
    // Silent themselves on a live host (their heartbeat older than 90 s).
    const silentAgents = await Promise.all(
      Array.from({ length: 4 }, () =>
        a.seedAgent(workspaceId, {
          runtimeInstanceId: liveHost.id,
          lastHeartbeatAt: new Date(Date.now() - 600_000),
        }),
      ),
    );
    const healthy = await a.seedAgent(workspaceId, { runtimeInstanceId: liveHost.id });
    const lost = [...onSilentHost, ...silentAgents].map((x) => x.id);

    const sweepers = [a, b].map((hub) => startPresenceSweeper(hub.hub.deps, 20));
    try {
      await eventually(
        async () =>
          (await a.database.prisma.agent.count({ where: { id: { in: lost }, status: 'lost' } })) ===
          lost.length,
        15_000,
        'every silent agent marked lost',
      );
      // More passes of both, side by side: nothing is marked or audited again.
      for (let i = 0; i < 5; i += 1) await Promise.all(sweepers.map((s) => s.sweep()));
    } finally {
      await Promise.all(sweepers.map((s) => s.stop()));
    }
    const audits = await a.database.prisma.auditEvent.findMany({
      where: { workspaceId, action: { in: ['agent.lost', 'runtime_host.lost'] } },
    });
    const agentAudits = audits.filter((e) => e.action === 'agent.lost').map((e) => e.targetId);
    expect(agentAudits.sort()).toEqual([...lost].sort());
    expect(audits.filter((e) => e.action === 'runtime_host.lost').map((e) => e.targetId)).toEqual([
      silentHost.id,
    ]);
    const still = await a.database.prisma.agent.findUniqueOrThrow({ where: { id: healthy.id } });
    expect(still.status).toBe('online');
  });
});
