import { generateKeyPairSync } from 'node:crypto';
import { startStubServer } from '@svc/testing';
import type { StubServer } from '@svc/testing';

/** The host id the fake hub serves a route table for. */
export const FAKE_HOST_ID = 'rti_fakehost';
export const FAKE_TABLE_PATH = `/api/v1/runtime-hosts/${FAKE_HOST_ID}/console-routes`;

export interface FakeHub extends StubServer {
  /** Status and body `/.well-known/jwks.json` answers with (by default one ES256 public key). */
  jwksStatus: number;
  jwksBody: string;
  /** Status and body of the host's route table (by default an empty table). */
  tableStatus: number;
  tableBody: string;
}

function publicJwks(): string {
  const { publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const jwk = publicKey.export({ format: 'jwk' });
  return JSON.stringify({ keys: [{ ...jwk, kid: 'test-key', alg: 'ES256', use: 'sig' }] });
}

function emptyTable(): string {
  return JSON.stringify({
    data: {
      host_id: FAKE_HOST_ID,
      workspace: { id: 'wsp_fake', slug: 'acme' },
      version: 'v1',
      generated_at: new Date().toISOString(),
      members: [],
      routes: [],
    },
  });
}

/**
 * A local stand-in for the hub: answers `/.well-known/jwks.json` and the route table of {@link FAKE_HOST_ID}
 * on 127.0.0.1, 404 elsewhere.
 */
export async function startFakeHub(): Promise<FakeHub> {
  const hub: FakeHub = Object.assign(
    await startStubServer((path) =>
      path === '/.well-known/jwks.json'
        ? { status: hub.jwksStatus, body: hub.jwksBody }
        : path === FAKE_TABLE_PATH
          ? { status: hub.tableStatus, body: hub.tableBody }
          : undefined,
    ),
    { jwksStatus: 200, jwksBody: publicJwks(), tableStatus: 200, tableBody: emptyTable() },
  );
  return hub;
}

/** The router's environment against the fake hub: the host, a runtime key and a console secret. */
export function fakeHubEnv(hubUrl: string): Record<string, string> {
  return {
    HUB_URL: hubUrl,
    SVC_RUNTIME_INSTANCE_ID: FAKE_HOST_ID,
    SVC_WORKSPACE_API_KEY: 'svk_fake-runtime-key',
    CONSOLE_ROUTER_UPSTREAM_SECRET: 'fake-console-secret-0123456789abcdef',
  };
}
