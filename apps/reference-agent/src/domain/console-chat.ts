import type { AgentStageAssignment } from './stage-handler';

export interface ChatFacts {
  name: string;
  agentId: string;
  status: 'idle' | 'busy';
  stages: AgentStageAssignment[];
}

/** Longest echo of the question quoted in a reply. */
const MAX_ECHO = 500;

/**
 * The reference agent's chat reply: what it knows about itself (name, idle/busy, the stages it is working)
 * and the question echoed back. Deterministic, with no model behind it.
 */
export function consoleChatReply(question: string, facts: ChatFacts): string {
  const asked = question.length > MAX_ECHO ? `${question.slice(0, MAX_ECHO)}…` : question;
  const lines = [`I am ${facts.name} (${facts.agentId}), a reference agent; I am ${facts.status}.`];
  if (facts.stages.length === 0) {
    lines.push('No stage is in progress.');
  } else {
    lines.push(`Stages in progress (${facts.stages.length}):`);
    for (const stage of facts.stages) {
      lines.push(
        `- ${stage.title} (${stage.key}, stage ${stage.position} of ${stage.stage_count}) of invocation ${stage.invocation_id}: ${stage.state}`,
      );
    }
  }
  lines.push(`You asked: "${asked}"`);
  return lines.join('\n');
}
