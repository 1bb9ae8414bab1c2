import { AppError } from '@svc/service-kit';

/** The typed not-found answers of the Workflow API's resources (another project's resource is not found too). */

export const invocationNotFound = (invocationId: string) =>
  new AppError({
    status: 404,
    code: 'invocation_not_found',
    detail: `No invocation '${invocationId}' in this project.`,
  });

export const stageNotFound = (stageId: string) =>
  new AppError({ status: 404, code: 'stage_not_found', detail: `No stage '${stageId}' in your workspace.` });

export const contractNotFound = (contractId: string) =>
  new AppError({
    status: 404,
    code: 'contract_not_found',
    detail: `No contract '${contractId}' in this project.`,
  });

export const artifactSchemaNotFound = (schemaId: string) =>
  new AppError({
    status: 404,
    code: 'artifact_schema_not_found',
    detail: `No artifact schema '${schemaId}'.`,
  });

export const subscriptionNotFound = (id: string) =>
  new AppError({
    status: 404,
    code: 'delivery_subscription_not_found',
    detail: `No delivery subscription '${id}' in this project.`,
  });

export const deliveryNotFound = (id: string) =>
  new AppError({ status: 404, code: 'delivery_not_found', detail: `No delivery '${id}' in this project.` });

/** An archived project takes no new invocations (invoke, retry); what it holds stays readable. */
export const projectArchived = (projectId: string) =>
  new AppError({
    status: 409,
    code: 'project_archived',
    detail: `Project '${projectId}' is archived: it takes no new invocations. Unarchive it to invoke again.`,
  });
