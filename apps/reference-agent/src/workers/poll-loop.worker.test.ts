import { createLogger } from '@svc/service-kit';
import type { AgentStageAssignment } from '../domain/stage-handler';
import { runPollLoop } from './poll-loop.worker';
import { Wakeup } from '../domain/wakeup';

const stage = (id: string) => ({ stage_id: id }) as AgentStageAssignment;

describe('runPollLoop', () => {
  it('when a listing fails, then it is retried after a backoff and the next listing reaches the tracker', async () => {
    const lines: Record<string, unknown>[] = [];
    const logger = createLogger({
      name: 'poll-loop-test',
      level: 'debug',
      destination: { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) },
    });
    const controller = new AbortController();
    const listings: string[][] = [];
    let calls = 0;
    const loop = runPollLoop(
      {
        api: {
          listStages: () => {
            calls += 1;
            return calls === 1
              ? Promise.reject(new Error('connection refused'))
              : Promise.resolve([stage('s1')]);
          },
        },
        stages: {
          isFull: () => false,
          reconcile: (stages) => {
            listings.push(stages.map((s) => s.stage_id));
            controller.abort();
            return 1;
          },
        },
        wakeup: new Wakeup(),
        logger,
        policy: { initialDelayMs: 5, maxDelayMs: 10, requestTimeoutMs: 1_000 },
        secrets: [],
        pollWaitSeconds: 0,
        idlePollMs: 10,
      },
      controller.signal,
    );
    await loop;
    expect(listings).toEqual([['s1']]);
    expect(lines.find((line) => line.msg === 'listing stages failed; retrying')).toMatchObject({
      attempt: 1,
    });
  });

  it('when every slot is taken, then it does not list but waits for a stage to settle', async () => {
    const controller = new AbortController();
    const wakeup = new Wakeup();
    let full = true;
    let listed = 0;
    const loop = runPollLoop(
      {
        api: {
          listStages: () => {
            listed += 1;
            controller.abort();
            return Promise.resolve([]);
          },
        },
        stages: { isFull: () => full, reconcile: () => 0 },
        wakeup,
        logger: createLogger({ name: 'poll-loop-test', level: 'silent' }),
        policy: { initialDelayMs: 5, maxDelayMs: 10, requestTimeoutMs: 1_000 },
        secrets: [],
        pollWaitSeconds: 0,
        idlePollMs: 60_000,
      },
      controller.signal,
    );
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(listed).toBe(0);
    full = false;
    wakeup.notify();
    await loop;
    expect(listed).toBe(1);
  });
});
