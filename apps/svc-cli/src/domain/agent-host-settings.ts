/**
 * What a host's environment hands on to the agents `svc start` starts there: the Workflow API they talk to
 * (`SVC_WORKFLOW_URL` → `WORKFLOW_URL`) and the host's stage handler module (`SVC_AGENT_HANDLER` →
 * `AGENT_HANDLER`), each only when it is set.
 */
export interface AgentHostEnv {
  SVC_WORKFLOW_URL?: string | undefined;
  SVC_AGENT_HANDLER?: string | undefined;
}

export function agentHostSettings(env: AgentHostEnv): Record<string, string> {
  return {
    ...(env.SVC_WORKFLOW_URL ? { WORKFLOW_URL: env.SVC_WORKFLOW_URL } : {}),
    ...(env.SVC_AGENT_HANDLER ? { AGENT_HANDLER: env.SVC_AGENT_HANDLER } : {}),
  };
}
