// The agent console's wire shapes, from its contract (packages/contracts/openapi/agent-console.yaml).
import type { components } from '@svc/contracts/agent-console';

export type AgentConsoleHealth = components['schemas']['AgentConsoleHealth'];
export type ChatMessage = components['schemas']['ChatMessage'];
export type SendChatMessageRequest = components['schemas']['SendChatMessageRequest'];
