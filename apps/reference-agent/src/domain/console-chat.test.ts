import type { AgentStageAssignment } from './stage-handler';
import { consoleChatReply } from './console-chat';

const stage = {
  stage_id: 'stg_1',
  invocation_id: 'inv_1',
  key: 'draft',
  title: 'Draft the report',
  position: 1,
  stage_count: 2,
  state: 'claimed',
} as AgentStageAssignment;

describe('consoleChatReply', () => {
  test('when the agent works a stage, then the reply names it, says busy and echoes the question', () => {
    expect(
      consoleChatReply('status?', { name: 'scribe', agentId: 'agt_1', status: 'busy', stages: [stage] }),
    ).toBe(
      [
        'I am scribe (agt_1), a reference agent; I am busy.',
        'Stages in progress (1):',
        '- Draft the report (draft, stage 1 of 2) of invocation inv_1: claimed',
        'You asked: "status?"',
      ].join('\n'),
    );
  });

  test('when the question is long, then the echo is cut at 500 characters; the same question gets the same reply', () => {
    const facts = { name: 'scribe', agentId: 'agt_1', status: 'idle' as const, stages: [] };
    const reply = consoleChatReply('x'.repeat(600), facts);
    expect(reply).toContain(`You asked: "${'x'.repeat(500)}…"`);
    expect(reply).toContain('No stage is in progress.');
    expect(consoleChatReply('x'.repeat(600), facts)).toBe(reply);
  });
});
