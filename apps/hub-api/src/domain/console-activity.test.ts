import { CONSOLE_ACTIVITY_MAX_SKEW_MS, consoleActivityUpdate } from './console-activity';

const now = new Date('2026-11-22T12:00:00.000Z');
const at = (ms: number) => new Date(now.getTime() + ms).toISOString();

describe('consoleActivityUpdate', () => {
  test('when routes report times, then each agent gets its time and routes without activity are dropped', () => {
    const update = consoleActivityUpdate(
      [
        { agentId: 'a', lastActivityAt: at(-5_000) },
        { agentId: 'b', lastActivityAt: null },
        { agentId: 'c', lastActivityAt: at(-1_000) },
      ],
      now,
    );
    expect(update.agentIds).toEqual(['a', 'c']);
    expect(update.times.map((d) => d.toISOString())).toEqual([at(-5_000), at(-1_000)]);
  });

  test('when an agent is reported twice, then its latest time is kept', () => {
    const update = consoleActivityUpdate(
      [
        { agentId: 'a', lastActivityAt: at(-1_000) },
        { agentId: 'a', lastActivityAt: at(-9_000) },
        { agentId: 'a', lastActivityAt: null },
      ],
      now,
    );
    expect(update).toEqual({ agentIds: ['a'], times: [new Date(at(-1_000))] });
  });

  test('when a time is ahead within the skew, then it is kept; beyond it, then it is clamped to now', () => {
    const update = consoleActivityUpdate(
      [
        { agentId: 'near', lastActivityAt: at(CONSOLE_ACTIVITY_MAX_SKEW_MS) },
        { agentId: 'far', lastActivityAt: at(CONSOLE_ACTIVITY_MAX_SKEW_MS + 1) },
      ],
      now,
    );
    expect(update.times.map((d) => d.toISOString())).toEqual([
      at(CONSOLE_ACTIVITY_MAX_SKEW_MS),
      now.toISOString(),
    ]);
  });

  test('when a time cannot be read, then the entry is dropped', () => {
    expect(consoleActivityUpdate([{ agentId: 'a', lastActivityAt: 'yesterday-ish' }], now)).toEqual({
      agentIds: [],
      times: [],
    });
  });
});
