import { workflowDocument } from '@svc/contracts';
import type { WorkflowApi } from '@svc/contracts';
import { checkDatabase } from '@svc/db-kit';
import { checkRedis, livenessHandler, readinessHandler } from '@svc/service-kit';
import type { OperationHandlers, Redis } from '@svc/service-kit';
import type { Pool } from 'pg';

type Handlers = Pick<
  OperationHandlers<WorkflowApi.operations>,
  'workflowLiveness' | 'workflowReadiness' | 'getWorkflowOpenApi'
>;

export function systemHandlers(deps: { pool: Pool; redis: Redis; publicUrl: string }): Handlers {
  const publicDocument = { ...workflowDocument, servers: [{ url: deps.publicUrl }] };
  return {
    workflowLiveness: livenessHandler(),
    workflowReadiness: readinessHandler({
      postgres: () => checkDatabase(deps.pool),
      redis: () => checkRedis(deps.redis),
    }),
    getWorkflowOpenApi: () => ({ status: 200, body: publicDocument }),
  };
}
