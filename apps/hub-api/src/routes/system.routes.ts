import { hubDocument } from '@svc/contracts';
import { checkDatabase } from '@svc/db-kit';
import { livenessHandler, readinessHandler } from '@svc/service-kit';
import type { Pool } from 'pg';
import type { HubDeps } from '../deps';
import type { HubHandlers } from './types';

export function systemHandlers(
  deps: HubDeps,
  pool: Pool,
): HubHandlers<'hubLiveness' | 'hubReadiness' | 'getHubOpenApi' | 'getJwks'> {
  const publicDocument = { ...hubDocument, servers: [{ url: deps.settings.publicUrl }] };
  return {
    hubLiveness: livenessHandler(),
    hubReadiness: readinessHandler({ postgres: () => checkDatabase(pool) }),
    getHubOpenApi: () => ({ status: 200, body: publicDocument }),
    getJwks: () => ({
      status: 200,
      body: deps.keys.jwks() as never,
      headers: { 'Cache-Control': 'public, max-age=60' },
    }),
  };
}
