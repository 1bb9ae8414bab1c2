import { startStubServer } from '@svc/testing';
import type { StubServer } from '@svc/testing';

export interface FakeHub extends StubServer {
  /** Status `/healthz` answers with. */
  healthStatus: number;
  /** Status `/api/v1/contract` answers with: 200 when the hub accepts the workspace API key. */
  contractStatus: number;
}

/** A local stand-in for the hub: answers `/healthz` and `/api/v1/contract` on 127.0.0.1, 404 elsewhere. */
export async function startFakeHub(): Promise<FakeHub> {
  const hub: FakeHub = Object.assign(
    await startStubServer((path) => {
      if (path === '/healthz') return { status: hub.healthStatus, body: '{"status":"ok"}' };
      if (path === '/api/v1/contract') return { status: hub.contractStatus, body: '{}' };
      return undefined;
    }),
    { healthStatus: 200, contractStatus: 200 },
  );
  return hub;
}
