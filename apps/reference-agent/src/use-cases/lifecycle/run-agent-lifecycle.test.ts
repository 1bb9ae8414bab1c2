import { createLogger } from '@svc/service-kit';
import { DEFAULT_RETRY_POLICY } from '../../domain/call-policy';
import type { HubAgent } from '../../data/platform-api';
import { AgentLifecycle } from './run-agent-lifecycle';

function setup() {
  const steps: string[] = [];
  const lifetime = new AbortController();
  let getSelfCalls = 0;
  const lifecycle = new AgentLifecycle({
    api: {
      getSelf: () => {
        getSelfCalls += 1;
        steps.push('getSelf');
        return Promise.resolve({
          id: 'agt_1',
          name: 'a',
          status: 'idle',
          capabilities: [],
        } as unknown as HubAgent);
      },
    },
    logger: createLogger({ name: 'lifecycle-test', level: 'silent' }),
    policy: DEFAULT_RETRY_POLICY,
    secrets: [],
    hub: {
      send: () => (steps.push('hub.send'), Promise.resolve()),
      startPeriodic: () => steps.push('hub.startPeriodic'),
      stopPeriodic: () => steps.push('hub.stopPeriodic'),
      idle: () => (
        steps.push(`hub.idle(lifetime ${lifetime.signal.aborted ? 'ended' : 'running'})`),
        Promise.resolve()
      ),
    },
    stages: {
      startHeldHeartbeats: () => steps.push('stages.startHeldHeartbeats'),
      stopHeldHeartbeats: () => steps.push('stages.stopHeldHeartbeats'),
      settleInFlight: (timeoutMs) => (steps.push(`stages.settleInFlight(${timeoutMs})`), Promise.resolve()),
    },
    pollLoop: (signal) => {
      steps.push('pollLoop');
      return new Promise((resolve) => signal.addEventListener('abort', () => resolve(), { once: true }));
    },
    lifetime,
    hubHeartbeatMs: 15_000,
    stopTimeoutMs: 250,
    concurrency: 4,
    pollWaitSeconds: 20,
  });
  return { lifecycle, steps, getSelfCalls: () => getSelfCalls };
}

describe('AgentLifecycle', () => {
  it('when started twice and stopped, then start runs once and stop ends the loop before the stages, timers and hub', async () => {
    const { lifecycle, steps, getSelfCalls } = setup();
    await Promise.all([lifecycle.start(), lifecycle.start()]);
    expect(getSelfCalls()).toBe(1);
    await lifecycle.stop();
    expect(steps).toEqual([
      'getSelf',
      'hub.send',
      'hub.startPeriodic',
      'stages.startHeldHeartbeats',
      'pollLoop',
      'stages.settleInFlight(250)',
      'hub.stopPeriodic',
      'stages.stopHeldHeartbeats',
      'hub.idle(lifetime ended)',
    ]);
  });

  it('when start is called after stop, then it rejects and nothing starts', async () => {
    const { lifecycle, steps } = setup();
    await lifecycle.stop();
    await expect(lifecycle.start()).rejects.toThrow('the agent was stopped');
    expect(steps).not.toContain('getSelf');
  });
});
