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
export { canonicalJson } from './wire/canonical-json';
export * from './invocation-fingerprint';
export * from './webhook-signing';
export * from './problem-codes';
