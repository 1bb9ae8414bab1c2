import { LOGIN_THROTTLE_DEFAULTS, LoginThrottle } from '../../src/auth/login-throttle';
import { randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { createHubClient, createHubInternalClient, unwrap } from '@svc/contracts';
import type { HubClient } from '@svc/contracts';
import { createLogger, startHttpServer } from '@svc/service-kit';
import type { Logger, Redis, RunningServer } from '@svc/service-kit';
import { createTestDatabase } from '@svc/testing';
import { createHubService, MIGRATIONS_DIR } from '../../src/app';
import type { HubService, HubSettings } from '../../src/app';
import { createDatabase } from '../../src/db';
import type { Database } from '../../src/db';
import { hashPassword } from '../../src/auth/passwords';
import { newId } from '@svc/service-kit';
import { generateOpaqueToken, hashOpaqueToken } from '@svc/auth';
import type { Prisma } from '../../src/generated/prisma/client';
import type { WorkspaceRole } from '../../src/generated/prisma/client';

export const SERVICE_TOKEN = `svs_${randomBytes(32).toString('base64url')}`;

/** The moment `m` minutes ago. */
export const minutesAgo = (m: number) => new Date(Date.now() - m * 60_000);

/** The secret part of an API key `svc_<12-character prefix>_<secret>`. */
export const secretOf = (key: string) => key.slice('svc_'.length + 12 + 1);

export function testSettings(overrides: Partial<HubSettings> = {}): HubSettings {
  return {
    HUB_PUBLIC_URL: 'http://hub.test',
    HUB_WORKFLOW_PUBLIC_URL: 'http://workflow.test',
    HUB_ENCRYPTION_KEYS: `k1:${randomBytes(32).toString('base64')}`,
    HUB_SERVICE_TOKEN: SERVICE_TOKEN,
    HUB_PARTICIPANT_TOKEN_TTL_SECONDS: 3600,
    HUB_AGENT_TOKEN_TTL_SECONDS: 3600,
    HUB_MANAGED_PROVIDERS: [],
    HUB_SERVER_LOCAL_PROVIDER_AUTH: false,
    HUB_RUNTIME_CREDENTIAL_TTL_SECONDS: 600,
    HUB_BODY_LIMIT: '64kb',
    ...overrides,
  };
}

export interface TestHub {
  url: string;
  hub: HubService;
  database: Database;
  databaseUrl: string;
  /** What the hub was started with (a replica is started with the same). */
  settings: HubSettings;
  /** Every line the hub logged, for secret-leak assertions. */
  logs: string[];
  client(options?: { apiKey?: string; token?: string }): HubClient;
  internal(serviceToken?: string): ReturnType<typeof createHubInternalClient>;
  /** A participant with a password, member of a new workspace with the given role. */
  seedMember(role?: WorkspaceRole, workspace?: { id: string; slug: string }): Promise<SeededMember>;
  /** A runtime host (`rti_…`) with a fresh heartbeat, and its relay token. */
  seedHost(
    workspaceId: string,
    overrides?: Partial<Prisma.RuntimeHostUncheckedCreateInput>,
  ): Promise<SeededHost>;
  /** An agent row (default: online on a new host, heartbeat now) and its AGENT_TOKEN. */
  seedAgent(workspaceId: string, overrides?: Partial<Prisma.AgentUncheckedCreateInput>): Promise<SeededAgent>;
  /** A project row (default code `P…`, name `Project <code>`), written directly. */
  seedProject(workspaceId: string, code?: string): Promise<Prisma.ProjectGetPayload<object>>;
  /** A team row with these agents as members, written directly. */
  seedTeam(workspaceId: string, agentIds: string[]): Promise<Prisma.TeamGetPayload<object>>;
  /** Signs in through the API. */
  login(email: string, password: string): Promise<string>;
  /** Signs in over HTTP and says how it went, without throwing. */
  loginAttempt(email: string, password: string): Promise<LoginAttempt>;
  /** Forgets every failed sign-in window and gives the hub these per-client limits (default: the hub's). */
  resetLoginThrottle(limits?: Partial<typeof LOGIN_THROTTLE_DEFAULTS>, now?: () => number): Promise<void>;
  close(): Promise<void>;
}

export interface LoginAttempt {
  status: number;
  /** The problem code of a refusal. */
  code: string | undefined;
  /** The session token of a success. */
  token: string | undefined;
  retryAfter: string | null;
}

export interface SeededHost {
  id: string;
  relayToken: string;
}

export interface SeededAgent {
  id: string;
  name: string;
  workspaceId: string;
  runtimeInstanceId: string | null;
  token: string;
}

export interface SeededMember {
  participantId: string;
  email: string;
  password: string;
  workspace: { id: string; slug: string };
  token: string;
}

/** A debug logger of the hub whose every line is pushed to `logs` (for secret-leak assertions). */
export function loggerInto(logs: string[]): Logger {
  return createLogger({
    name: 'hub-api',
    level: 'debug',
    destination: new Writable({
      write(chunk, _enc, done) {
        logs.push(chunk.toString());
        done();
      },
    }),
  });
}

export async function startTestHub(
  options: {
    now?: () => Date;
    settings?: Partial<HubSettings>;
    /** Starts a second replica: another hub process's worth of state on the first one's database. */
    replicaOf?: TestHub;
    /** Announces credential and roster notices on this Redis prefix (default: none are sent). */
    notices?: { redis: Redis; prefix: string };
  } = {},
): Promise<TestHub> {
  const db = options.replicaOf
    ? { url: options.replicaOf.databaseUrl, drop: async () => undefined }
    : await createTestDatabase({ migrationsDir: MIGRATIONS_DIR, prefix: 'svc_hub' });
  const database = createDatabase(db.url, { poolSize: 5 });
  const settings = options.replicaOf
    ? { ...options.replicaOf.settings, ...options.settings }
    : testSettings(options.settings);
  const logs: string[] = [];
  const logger = loggerInto(logs);
  const hub = await createHubService({
    database,
    settings,
    logger,
    validateResponses: true,
    now: options.now,
    keyRefreshIntervalMs: 0,
    ...(options.notices ? { notices: options.notices } : {}),
  });
  const server: RunningServer = await startHttpServer(hub.app, { host: '127.0.0.1', port: 0 });
  const client = (o: { apiKey?: string; token?: string } = {}) =>
    createHubClient({ baseUrl: server.url, ...o });

  const testHub: TestHub = {
    url: server.url,
    hub,
    database,
    databaseUrl: db.url,
    settings,
    logs,
    client,
    internal: (serviceToken = SERVICE_TOKEN) =>
      createHubInternalClient({ baseUrl: server.url, serviceToken }),
    async resetLoginThrottle(limits = {}, now = Date.now) {
      await database.prisma.$executeRaw`DELETE FROM login_throttle_windows`;
      hub.deps.loginThrottle = new LoginThrottle({
        ...LOGIN_THROTTLE_DEFAULTS,
        ...limits,
        now,
        db: database.prisma,
      });
    },
    async seedHost(workspaceId, overrides = {}) {
      const id = newId('rti');
      const relayToken = generateOpaqueToken('rly');
      await database.prisma.runtimeHost.create({
        data: {
          id,
          workspaceId,
          name: `host-${randomBytes(4).toString('hex')}`,
          workdirRoot: '/srv/agents',
          consolePublicBaseUrl: 'https://console.example.test',
          relayTokenHash: hashOpaqueToken(relayToken),
          relayTokenCiphertext: hub.deps.box.seal(relayToken, id),
          relayReady: true,
          consoleRouterReady: true,
          lastHeartbeatAt: new Date(),
          ...overrides,
        },
      });
      return { id, relayToken };
    },
    async seedAgent(workspaceId, overrides = {}) {
      const runtimeInstanceId =
        overrides.runtimeInstanceId === undefined
          ? (await testHub.seedHost(workspaceId)).id
          : overrides.runtimeInstanceId;
      const agent = await database.prisma.agent.create({
        data: {
          id: newId('agt'),
          workspaceId,
          name: `agent-${randomBytes(4).toString('hex')}`,
          status: 'online',
          capabilities: ['code'],
          lastHeartbeatAt: new Date(),
          startedAt: new Date(),
          ...overrides,
          runtimeInstanceId,
        },
      });
      const token = hub.deps.keys.issuer.issue({
        audience: 'agent',
        subject: agent.id,
        ttlSeconds: 3600,
        claims: {
          workspace_id: agent.workspaceId,
          runtime_instance_id: agent.runtimeInstanceId,
          agent_name: agent.name,
        },
      }).token;
      return {
        id: agent.id,
        name: agent.name,
        workspaceId,
        runtimeInstanceId: agent.runtimeInstanceId,
        token,
      };
    },
    seedProject(workspaceId, code = `P${newId('x').slice(-6)}`) {
      return database.prisma.project.create({
        data: { id: newId('prj'), workspaceId, code, name: `Project ${code}` },
      });
    },
    async seedTeam(workspaceId, agentIds) {
      const team = await database.prisma.team.create({
        data: { id: newId('team'), workspaceId, name: `team-${randomBytes(4).toString('hex')}` },
      });
      if (agentIds.length > 0)
        await database.prisma.teamAgent.createMany({
          data: agentIds.map((agentId) => ({ teamId: team.id, agentId })),
        });
      return team;
    },
    async login(email, password) {
      const session = unwrap(await client().POST('/api/v1/auth/login', { body: { email, password } }));
      return session.token;
    },
    async loginAttempt(email, password) {
      const res = await fetch(`${server.url}/api/v1/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email, password }),
      });
      const body = (await res.json()) as { code?: string; data?: { token?: string } };
      return {
        status: res.status,
        code: body.code,
        token: body.data?.token,
        retryAfter: res.headers.get('retry-after'),
      };
    },
    async seedMember(role = 'owner', workspace) {
      const suffix = randomBytes(4).toString('hex');
      const email = `person-${suffix}@example.test`;
      const password = `pw-${randomBytes(12).toString('hex')}`;
      const prisma = database.prisma;
      const ws =
        workspace ??
        (await prisma.workspace.create({
          data: { id: newId('ws'), slug: `ws-${suffix}`, name: `Workspace ${suffix}` },
        }));
      const participant = await prisma.participant.create({
        data: {
          id: newId('prt'),
          email,
          displayName: `Person ${suffix}`,
          passwordHash: await hashPassword(password),
        },
      });
      await prisma.membership.create({ data: { workspaceId: ws.id, participantId: participant.id, role } });
      const token = await testHub.login(email, password);
      return {
        participantId: participant.id,
        email,
        password,
        workspace: { id: ws.id, slug: ws.slug },
        token,
      };
    },
    async close() {
      await server.close(1000);
      hub.stop();
      await database.close();
      await db.drop();
    },
  };
  return testHub;
}

/** Creates an API key through the API as the given admin. */
export async function createKey(
  t: TestHub,
  admin: SeededMember,
  body: {
    name?: string;
    preset?: 'read-only' | 'automation' | 'agent-runtime';
    scopes?: string[];
    expires_at?: string;
  },
) {
  return unwrap(
    await t.client({ token: admin.token }).POST('/api/v1/workspaces/{workspace}/api-keys', {
      params: { path: { workspace: admin.workspace.slug } },
      body: { name: body.name ?? 'test key', ...body },
    }),
  );
}
