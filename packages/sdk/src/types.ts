/** Named types of the public documents, read from the generated contract types. */
import type {
  components as WorkflowComponents,
  operations as WorkflowOperations,
} from './generated/workflow.js';
import type { components as HubComponents } from './generated/hub.js';

type W = WorkflowComponents['schemas'];
type Query<Op extends keyof WorkflowOperations> = NonNullable<WorkflowOperations[Op]['parameters']['query']>;

export type Problem = W['Problem'];
export type Invocation = W['InvocationsInvocation'];
export type InvocationSummary = W['InvocationsInvocationSummary'];
export type InvocationState = W['InvocationsState'];
export type InvocationAttention = W['InvocationsAttention'];
export type InvocationCreateParams = W['InvocationsCreateRequest'];
export type InvocationListParams = Omit<Query<'listInvocations'>, 'cursor'> & { cursor?: string };
export type Blocker = W['InvocationsBlocker'];
export type Preflight = W['InvocationsPreflight'];
export type PreflightParams = W['InvocationsPreflightRequest'];
export type LaunchReport = W['RunsLaunchResponse']['launch'];
export type ApprovalDecision = W['RunsApprovalRequest']['decision'];
/** An artifact envelope; `T` types its payload (what the pinned artifact schema describes). */
export type ArtifactEnvelope<T = unknown> = Omit<W['ArtifactEnvelope'], 'payload'> & { payload: T };
export type ArtifactPublishParams = W['ArtifactPublishRequest'];
export type Contract = W['ContractsContract'];
export type ContractCreateParams = W['ContractsCreateRequest'];
export type ContractUpdateParams = W['ContractsPatchRequest'];
export type ResolveParams = W['ContractsResolveRequest'];
export type ResolveResult = W['ContractsResolveResult'];
export type DeliveryEventBody = W['DeliveryEventBody'];
export type DeliveryEventType = W['DeliveryEventType'];
export type StageAssignment = W['AgentStageAssignment'];
export type StageEvidence = W['StageEvidence'];
/** A stage's completion: its summary and evidence stored with it. */
export type StageCompleteParams = W['StageCompleteRequest'];
export type HubProject = HubComponents['schemas']['Project'];
export type HubMe = HubComponents['schemas']['Me'];
export type ArtifactSchemaSummary = W['ArtifactSchemaSummary'];
export type DeliverySubscription = W['DeliverySubscription'];
export type DeliverySubscriptionCreateParams = W['DeliverySubscriptionCreateRequest'];
export type DeliverySubscriptionUpdateParams = W['DeliverySubscriptionPatchRequest'];
export type Delivery = W['Delivery'];

/** The JSON request body of a workflow operation. */
export type BodyOf<Op extends keyof WorkflowOperations> = WorkflowOperations[Op] extends {
  requestBody?: { content: { 'application/json': infer B } };
}
  ? B
  : never;
/** The `data` of a workflow operation's first success answer. */
export type DataOf<Op extends keyof WorkflowOperations> = WorkflowOperations[Op]['responses'] extends infer R
  ? R extends { 200: { content: { 'application/json': { data: infer D } } } }
    ? D
    : R extends { 201: { content: { 'application/json': { data: infer D } } } }
      ? D
      : R extends { 202: { content: { 'application/json': { data: infer D } } } }
        ? D
        : never
  : never;
/** Query parameters of a workflow operation. */
export type QueryOf<Op extends keyof WorkflowOperations> = Query<Op>;
