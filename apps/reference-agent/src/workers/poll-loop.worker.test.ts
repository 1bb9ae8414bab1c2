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
          claimNext: () => Promise.reject(new Error('not expected')),
        },
        stages: {
          isFull: () => false,
          freeSlots: () => 1,
          holdsHeld: () => false,
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
          claimNext: () => Promise.reject(new Error('not expected')),
        },
        stages: { isFull: () => full, freeSlots: () => 1, holdsHeld: () => false, reconcile: () => 0 },
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

  it('after its first listing, it claims its next stages up to its free slots; it lists again while it holds a held stage or after a failed claim', async () => {
    const controller = new AbortController();
    const calls: string[] = [];
    const answers: [string[], boolean][] = [];
    let held = false;
    let claims = 0;
    const loop = runPollLoop(
      {
        api: {
          listStages: (wait) => {
            calls.push(`list wait=${wait}`);
            if (calls.length >= 6) controller.abort();
            return Promise.resolve([stage('listed')]);
          },
          claimNext: (wait, max) => {
            calls.push(`claim wait=${wait} max=${max}`);
            claims += 1;
            if (claims === 2) return Promise.reject(new Error('connection reset'));
            // The second claimed stage is then held: listings follow until it is not.
            if (claims === 3) held = true;
            return Promise.resolve([stage(`c${claims}`)]);
          },
        },
        stages: {
          isFull: () => false,
          freeSlots: () => 3,
          holdsHeld: () => {
            const was = held;
            held = false;
            return was;
          },
          reconcile: (stages, _at, options) => {
            answers.push([stages.map((s) => s.stage_id), options?.claimed === true]);
            return stages.length;
          },
        },
        wakeup: new Wakeup(),
        logger: createLogger({ name: 'poll-loop-test', level: 'silent' }),
        policy: { initialDelayMs: 5, maxDelayMs: 10, requestTimeoutMs: 1_000 },
        secrets: [],
        pollWaitSeconds: 7,
        idlePollMs: 10,
      },
      controller.signal,
    );
    await loop;
    expect(calls).toEqual([
      'list wait=7',
      'claim wait=7 max=3',
      'claim wait=7 max=3',
      // Its answer was lost: the stages it may have claimed are listed.
      'list wait=7',
      'claim wait=7 max=3',
      // A stage is held.
      'list wait=7',
    ]);
    expect(answers).toEqual([
      [['listed'], false],
      [['c1'], true],
      [['listed'], false],
      [['c3'], true],
      [['listed'], false],
    ]);
  });
});
