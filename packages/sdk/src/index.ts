export {
  Workflow,
  Contracts,
  Invocations,
  ArtifactSchemas,
  Subscriptions,
  Deliveries,
  InvocationHandle,
} from './workflow.js';
export type {
  StartOptions,
  HandleResultOptions,
  HandleResult,
  WorkflowClientOptions,
  CreateInvocationOptions,
  CreatedInvocation,
  WaitOptions,
  RunOptions,
  RunResult,
  RawWorkflowClient,
  WorkflowPaths,
} from './workflow.js';
export { WorkflowAgent } from './agent.js';
export type { AgentClientOptions, Heartbeat, HubHeartbeatStatus, Stage } from './agent.js';
export { Hub } from './hub.js';
export type { HubPaths } from './hub.js';
export { DEFAULT_MAX_RETRIES, DEFAULT_TIMEOUT_MS, USER_AGENT } from './core.js';
export type { ClientOptions, FetchLike } from './core.js';
export { Page, PagePromise } from './pagination.js';
export { expectOk, unwrap } from './request.js';
export type { RequestOptions } from './request.js';
export * from './errors.js';
export { verifyEnvelope } from './envelope.js';
export type { ExpectedEnvelope } from './envelope.js';
export { canonicalJson } from './generated/wire/canonical-json.js';
export { Webhook, WebhookVerificationError, DEFAULT_TOLERANCE_SECONDS } from './webhooks.js';
export type {
  WebhookOptions,
  WebhookDelivery,
  WebhookEvent,
  WebhookEventOf,
  WebhookEventType,
  WebhookHeaders,
  WebhookVerificationCode,
} from './webhooks.js';
export { VERSION } from './generated/version.js';
export type * from './types.js';
export type * as WorkflowApi from './generated/workflow.js';
export type * as HubApi from './generated/hub.js';
