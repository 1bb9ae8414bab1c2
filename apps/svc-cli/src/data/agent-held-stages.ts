import { createWorkflowClient } from '@svc/contracts';

/**
 * How many open workflow stages (assigned, claimed or blocked) an agent holds, asked of the Workflow API with
 * the agent's own token. `refused` when the Workflow API refuses the token (the agent cannot hold work with it);
 * `unknown` when it could not be asked (no URL or token, or no answer): the caller keeps the agent then.
 */
export async function agentHeldStages(
  env: Record<string, string>,
  clientName: string,
): Promise<number | 'refused' | 'unknown'> {
  // Without WORKFLOW_URL the reference agent talks to its default, so that is where its stages are.
  const workflowUrl = env.WORKFLOW_URL || 'http://127.0.0.1:4100';
  const token = env.AGENT_TOKEN;
  if (!token) return 'unknown';
  try {
    const client = createWorkflowClient({ baseUrl: workflowUrl, token, clientName });
    const res = await client.GET('/api/v1/agents/me/workflow-stages', {
      params: { query: { wait: 0 } },
      signal: AbortSignal.timeout(10_000),
    });
    if (res.data) return res.data.data.length;
    if (res.response.status === 401 || res.response.status === 403) return 'refused';
    return 'unknown';
  } catch {
    return 'unknown';
  }
}
