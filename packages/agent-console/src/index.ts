export { createAgentConsole } from './console';
export type { AgentConsole, AgentConsoleOptions, AgentStatus } from './console';
export { PROXY_CALLER_HEADER, PROXY_KEY_HEADER } from './auth/callers';
export { CHAT_FAILURE_REPLY } from './chat/chat';
export type { ChatHandler } from './chat/chat';
export type { ChatAuthor, ChatMessage } from './chat/conversation';
export { TERMINAL_ENV_ALLOW_LIST } from './terminal/session';
export { TERMINAL_PATH } from './terminal/upgrade';
