import type { Actor } from '@svc/auth';
import type { WorkflowApi } from '@svc/contracts';
import { AppError } from '@svc/service-kit';
import type { OperationHandlers } from '@svc/service-kit';

export type WorkflowOperations = WorkflowApi.operations;
export type WorkflowHandlers<K extends keyof WorkflowOperations> = Pick<
  OperationHandlers<WorkflowOperations>,
  K
>;

export function actorOf(actor: Actor | undefined): Actor {
  if (!actor) throw new AppError({ status: 401, code: 'credential_missing', detail: 'Send a credential.' });
  return actor;
}
