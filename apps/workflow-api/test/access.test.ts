import { startWorkflowTestStack } from './support/stack';
import type { WorkflowTestStack } from './support/stack';

let s: WorkflowTestStack;
beforeAll(async () => {
  s = await startWorkflowTestStack();
}, 60_000);
afterAll(() => s.close());

describe('Workflow API access through the hub', () => {
  test('when the hub introspects a live key, then the probe document is served and the key is accepted', async () => {
    const key = await s.key(['workflow-contracts:read']);
    const res = await fetch(`${s.url}/readyz`, { headers: { 'x-api-key': key } });
    expect(res.status).toBe(200);
  });
});
