import { createLogger } from '@svc/service-kit';
import { DEFAULT_RETRY_POLICY } from '../../domain/call-policy';
import { defaultStageHandler } from '../../domain/default-stage-handler';
import type { PlatformApi } from '../../data/platform-api';
import type { AgentStageAssignment } from '../../domain/stage-handler';
import type { StageOutcome } from './run-stage';
import { StageTracker } from './track-stages';

const stage = (
  id: string,
  state: AgentStageAssignment['state'] = 'assigned',
  assignedAt = '2026-11-28T10:00:00.000Z',
) =>
  ({
    stage_id: id,
    invocation_id: 'inv_1',
    state,
    heartbeat_interval_seconds: 1,
    assigned_at: assignedAt,
  }) as AgentStageAssignment;

const tick = () => new Promise((resolve) => setImmediate(resolve));

/** A tracker whose stage runs end when the test says so. */
function setup(options: { concurrency?: number; dropCooldownMs?: number } = {}) {
  const runs = new Map<
    string,
    { finish: (outcome: StageOutcome) => void; signal: AbortSignal; claimed: boolean }
  >();
  const events: string[] = [];
  const tracker = new StageTracker({
    api: {} as PlatformApi,
    handler: defaultStageHandler,
    logger: createLogger({ name: 'stage-tracker-test', level: 'silent' }),
    policy: DEFAULT_RETRY_POLICY,
    secrets: [],
    concurrency: options.concurrency ?? 4,
    dropCooldownMs: options.dropCooldownMs ?? 60_000,
    lifetime: new AbortController().signal,
    onWorkingChanged: () => events.push('working-changed'),
    onSettled: () => events.push('settled'),
    runStage: (assigned, signal, _deps, runOptions) =>
      new Promise<StageOutcome>((resolve) =>
        runs.set(assigned.stage_id, { finish: resolve, signal, claimed: runOptions?.claimed === true }),
      ),
  });
  const finish = async (id: string, outcome: StageOutcome) => {
    runs.get(id)?.finish(outcome);
    await tick();
  };
  return { tracker, runs, events, finish };
}

describe('StageTracker', () => {
  it('when more stages are listed than the concurrency, then only that many start and the tracker is full', () => {
    const { tracker, runs, events } = setup({ concurrency: 2 });
    expect(tracker.reconcile([stage('s1'), stage('s2'), stage('s3')], Date.now())).toBe(2);
    expect([...runs.keys()]).toEqual(['s1', 's2']);
    expect(tracker.isFull()).toBe(true);
    expect(tracker.workingCount()).toBe(2);
    expect(events).toEqual(['working-changed', 'working-changed']);
  });

  it('when a stage being worked is listed again, then it is not started twice; once it completed, then a slot is free', async () => {
    const { tracker, events, finish } = setup({ concurrency: 1 });
    tracker.reconcile([stage('s1')], Date.now());
    expect(tracker.reconcile([stage('s1')], Date.now())).toBe(0);
    await finish('s1', { kind: 'completed' });
    expect(tracker.isFull()).toBe(false);
    expect(events.slice(-2)).toEqual(['working-changed', 'settled']);
  });

  it('when a listing read before a stage completed still shows it, then it is not started again; a later one is', async () => {
    const { tracker, runs, finish } = setup();
    const before = Date.now();
    tracker.reconcile([stage('s1')], before);
    await new Promise((resolve) => setTimeout(resolve, 5));
    await finish('s1', { kind: 'completed' });
    runs.clear();
    // Answered after the completion, read before it: stale for s1.
    expect(tracker.reconcile([stage('s1'), stage('s2')], before)).toBe(1);
    expect([...runs.keys()]).toEqual(['s2']);
    // A listing that started after the completion and shows it open: it is this agent's again.
    expect(tracker.reconcile([stage('s1')], Date.now() + 1)).toBe(1);
    expect([...runs.keys()]).toEqual(['s2', 's1']);
  });

  it('when a stage was dropped, then it is ignored while its cooldown lasts', async () => {
    const { tracker, finish } = setup();
    tracker.reconcile([stage('s1')], Date.now());
    await finish('s1', { kind: 'dropped', code: 'stage_reassigned' });
    expect(tracker.reconcile([stage('s1')], Date.now())).toBe(0);

    const short = setup({ dropCooldownMs: 0 });
    short.tracker.reconcile([stage('s1')], Date.now());
    await short.finish('s1', { kind: 'dropped', code: 'stage_reassigned' });
    expect(short.tracker.reconcile([stage('s1')], Date.now())).toBe(1);
  });

  it('when a dropped stage is assigned to this agent again (a new assignment), then it is worked at once', async () => {
    const { tracker, finish } = setup();
    tracker.reconcile([stage('s1')], Date.now());
    await finish('s1', { kind: 'dropped', code: 'stage_reassigned' });
    expect(tracker.reconcile([stage('s1')], Date.now())).toBe(0);
    expect(tracker.reconcile([stage('s1', 'assigned', '2026-11-28T10:01:00.000Z')], Date.now())).toBe(1);
  });

  it('when a held stage is listed as still blocked, then it waits; listed as resumed, then it is worked again', async () => {
    const { tracker, finish } = setup();
    tracker.reconcile([stage('s1')], Date.now());
    await finish('s1', { kind: 'held', blockerReported: true });
    expect(tracker.workingCount()).toBe(0);
    expect(tracker.reconcile([stage('s1', 'blocked')], Date.now())).toBe(0);
    expect(tracker.reconcile([stage('s1', 'claimed')], Date.now())).toBe(1);
  });

  it('when a held stage is missing from a listing made after it was held, then it is forgotten', async () => {
    const { tracker, runs, finish } = setup();
    tracker.reconcile([stage('s1')], Date.now());
    await finish('s1', { kind: 'held', blockerReported: false });
    tracker.reconcile([], Date.now());
    runs.clear();
    // Forgotten, so a later listing starts it as a new stage even though it is still blocked.
    expect(tracker.reconcile([stage('s1', 'blocked')], Date.now())).toBe(1);
    expect(runs.has('s1')).toBe(true);
  });

  it('when stages do not finish within the stop bound, then their runs are aborted', async () => {
    const { tracker, runs } = setup();
    tracker.reconcile([stage('s1')], Date.now());
    const run = runs.get('s1');
    run?.signal.addEventListener('abort', () => run.finish({ kind: 'abandoned' }));
    await tracker.settleInFlight(20);
    expect(run?.signal.aborted).toBe(true);
    expect(tracker.workingCount()).toBe(0);
  });

  it('when claim-next answers stages, then they start without another claim, within the free slots, and held stages are kept', async () => {
    const { tracker, runs, finish } = setup({ concurrency: 3 });
    tracker.reconcile([stage('held')], Date.now());
    await finish('held', { kind: 'held', blockerReported: true });
    expect(tracker.holdsHeld()).toBe(true);
    expect(tracker.freeSlots()).toBe(3);
    expect(
      tracker.reconcile([stage('c1', 'claimed'), stage('c2', 'claimed')], Date.now(), { claimed: true }),
    ).toBe(2);
    expect([runs.get('c1')?.claimed, runs.get('c2')?.claimed]).toEqual([true, true]);
    expect(tracker.freeSlots()).toBe(1);
    // Not a listing: the held stage, absent from the answer, is still held.
    expect(tracker.holdsHeld()).toBe(true);
    // A stage completed since is not started again from an answer read before its completion.
    await finish('c1', { kind: 'completed' });
    expect(tracker.reconcile([stage('c1', 'claimed')], Date.now() - 60_000, { claimed: true })).toBe(0);
    // A listed stage is claimed by its runner as before.
    expect(tracker.reconcile([stage('l1')], Date.now())).toBe(1);
    expect(runs.get('l1')?.claimed).toBe(false);
  });
});
