import { startStubServer } from '@svc/testing';
import type { StubServer } from '@svc/testing';

export interface FakeHub extends StubServer {
  /** Status `/healthz` answers with. */
  healthStatus: number;
}

/** A local stand-in for the hub: answers `/healthz` on 127.0.0.1, 404 elsewhere. */
export async function startFakeHub(): Promise<FakeHub> {
  const hub: FakeHub = Object.assign(
    await startStubServer((path) =>
      path === '/healthz' ? { status: hub.healthStatus, body: '{"status":"ok"}' } : undefined,
    ),
    { healthStatus: 200 },
  );
  return hub;
}
