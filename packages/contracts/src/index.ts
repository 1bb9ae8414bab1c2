export * from './clients';
export * from './api-error';
export * from './operation-types';
export type { OpenApiDocument } from './openapi-document';
export {
  hubDocument,
  hubInternalDocument,
  workflowDocument,
  workflowWorkerDocument,
  relayDocument,
  consoleRouterDocument,
  agentConsoleDocument,
  runtimeControlDocument,
} from './generated/documents';
export type * as HubApi from './generated/hub';
export type * as HubInternalApi from './generated/hubInternal';
export type * as WorkflowApi from './generated/workflow';
export type * as WorkflowWorkerApi from './generated/workflowWorker';
export type * as RelayApi from './generated/relay';
export type * as ConsoleRouterApi from './generated/consoleRouter';
export type * as AgentConsoleApi from './generated/agentConsole';
export type * as RuntimeControlApi from './generated/runtimeControl';
export * from './canonical-json';
export * from './invocation-fingerprint';
export * from './workflow-invoke';
export * from './workflow-artifacts';
export * from './workflow-envelope';
export * from './webhooks';
export * from './problem-codes';
