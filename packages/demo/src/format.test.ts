import type { Invocation } from '@svc/sdk';
import {
  agentLabel,
  assistanceRows,
  colourWanted,
  createStyle,
  explainWinner,
  firstLine,
  formatBlockers,
  formatElapsed,
  formatJson,
  formatMs,
  formatRows,
  formatStageTable,
  formatStateLine,
  formatTable,
  visibleLength,
  yesNo,
} from './format';
import type { Assistance } from './format';

type Stage = Invocation['stages'][number];

function stage(overrides: Partial<Stage>): Stage {
  return {
    stage_id: 'stg_1',
    key: 'collect',
    title: 'Collect',
    position: 1,
    state: 'pending',
    required_capabilities: ['report'],
    owner_agent_id: null,
    handoff_id: null,
    attempts: 1,
    blocker_reason: null,
    progress: null,
    assigned_at: null,
    claimed_at: null,
    last_heartbeat_at: null,
    completed_at: null,
    duration_ms: null,
    ...overrides,
  };
}

function invocation(overrides: Partial<Invocation>): Invocation {
  return {
    invocation_id: 'inv_1',
    project_id: 'prj_1',
    intent: 'Weekly status report',
    intent_normalized: 'weekly status report',
    failure: null,
    cancellation: null,
    state: 'running',
    attention: 'none',
    route: {
      matched: true,
      selection: 'resolved',
      contract_id: 'wfc_1',
      template_key: 't',
      template_version: '1',
      winner_reason: 'only candidate',
    },
    correlation_id: null,
    created_at: '2026-01-01T00:00:00.000Z',
    updated_at: '2026-01-01T00:00:00.000Z',
    stages: [],
    current_stage: null,
    latest_handoff: null,
    artifact: null,
    run_id: null,
    attention_reason: null,
    blockers: [],
    approval: null,
    ...overrides,
  };
}

describe('formatRows', () => {
  it('when labels differ in length, then the values start in one column', () => {
    expect(
      formatRows([
        ['id', 'art_1'],
        ['schema', 'report@1.0.0'],
      ]),
    ).toEqual(['  id      art_1', '  schema  report@1.0.0']);
  });

  it('when a value has several lines, then the later lines continue under the first', () => {
    expect(formatRows([['blockers', 'first\nsecond']], 0)).toEqual(['blockers  first', '          second']);
  });

  it('when a minimum label width is given, then shorter labels are padded to it', () => {
    expect(formatRows([['id', 'x']], 0, 6)).toEqual(['id      x']);
  });

  it('when a value is empty, then the row carries no trailing spaces', () => {
    expect(formatRows([['payload', '']])).toEqual(['  payload']);
  });
});

describe('formatTable', () => {
  it('when cells differ in width, then columns align and right-aligned columns pad on the left', () => {
    expect(
      formatTable(
        [{ header: 'KEY' }, { header: 'MS', align: 'right' }],
        [
          ['collect', '5'],
          ['w', '1,234'],
        ],
        0,
      ),
    ).toEqual(['KEY         MS', 'collect      5', 'w        1,234']);
  });

  it('when a cell is coloured, then its escape codes take no width', () => {
    const style = createStyle(true);
    const lines = formatTable([{ header: 'A' }, { header: 'B' }], [[style.good('yes'), 'x']], 0);
    expect(lines[0]).toBe('A    B');
    expect(visibleLength(lines[1] ?? '')).toBe('yes  x'.length);
  });
});

describe('style', () => {
  it('when colour is off, then text is returned unchanged', () => {
    const style = createStyle(false);
    expect(style.bold('x') + style.good('y') + style.bad('z')).toBe('xyz');
    expect(yesNo(true)).toBe('yes');
    expect(yesNo(false)).toBe('no');
  });

  it('when colour is on, then text is wrapped in escape codes', () => {
    expect(createStyle(true).good('yes')).toBe('\u001b[32myes\u001b[39m');
  });

  it('when stdout is not a terminal, NO_COLOR is set or TERM is dumb, then no colour is wanted', () => {
    expect(colourWanted(true, {})).toBe(true);
    expect(colourWanted(false, {})).toBe(false);
    expect(colourWanted(undefined, {})).toBe(false);
    expect(colourWanted(true, { NO_COLOR: '' })).toBe(false);
    expect(colourWanted(true, { TERM: 'dumb' })).toBe(false);
  });
});

describe('durations', () => {
  it('when a duration is known, then it prints as grouped milliseconds, else as a dash', () => {
    expect(formatMs(412.4)).toBe('412 ms');
    expect(formatMs(12_345)).toBe('12,345 ms');
    expect(formatMs(null)).toBe('-');
    expect(formatMs(undefined)).toBe('-');
  });

  it('when time has elapsed, then it prints in seconds with one decimal', () => {
    expect(formatElapsed(1450)).toBe('+1.4 s');
    expect(formatElapsed(-5)).toBe('+0.0 s');
  });
});

describe('formatBlockers', () => {
  it('when there are none, then it says so', () => {
    expect(formatBlockers([])).toBe('none');
  });

  it('when there are blockers, then each names category, code and stage with its recommended action', () => {
    expect(
      formatBlockers([
        {
          effect: 'waits_for_owner',
          category: 'roster_ownership',
          code: 'no_stage_owner',
          message: 'No agent can own stage write.',
          recommended_action: 'Add an agent with capability report.',
          stage_key: 'write',
        },
        {
          effect: 'waits_for_owner',
          category: 'runtime_endpoints',
          code: 'no_runtime_host',
          message: 'No host.',
          recommended_action: 'Register one.',
        },
      ]).split('\n'),
    ).toEqual([
      'roster_ownership / no_stage_owner (stage write): No agent can own stage write.',
      '  → Add an agent with capability report.',
      'runtime_endpoints / no_runtime_host: No host.',
      '  → Register one.',
    ]);
  });
});

describe('explainWinner', () => {
  it("when the explanation is resolve's, then the rule, reason and counts are read from it", () => {
    expect(
      explainWinner({
        normalized_intent: 'weekly status report',
        active_contracts: 3,
        candidates: [{}, {}],
        unlisted_contracts: 1,
        winner_rule: 'priority',
        winner_reason: 'highest priority (10)',
      }),
    ).toEqual({
      rule: 'priority',
      reason: 'highest priority (10)',
      normalizedIntent: 'weekly status report',
      candidates: 2,
      unlisted: 1,
      activeContracts: 3,
    });
  });

  it('when the explanation is missing or malformed, then nothing is invented', () => {
    expect(explainWinner(null)).toEqual({
      rule: null,
      reason: null,
      normalizedIntent: null,
      candidates: 0,
      unlisted: 0,
      activeContracts: null,
    });
  });
});

describe('assistanceRows', () => {
  const assistance = (over: Partial<Assistance> = {}): Assistance => ({
    model_assisted: true,
    trigger: 'no_match',
    outcome: 'suggested',
    detail: 'The model suggested one of the offered contracts.',
    provider: 'openai',
    model: 'gpt-test',
    suggestion: { contract_id: 'wfc_1', name: 'Weekly report', reason: 'It asks for a weekly summary.' },
    contracts_offered: 3,
    latency_ms: 840,
    tokens_in: 120,
    tokens_out: 30,
    budget_warning: false,
    routing: 'pin_required',
    ...over,
  });

  it('when the model was not asked, then there is nothing to show', () => {
    expect(assistanceRows(undefined)).toEqual([]);
  });

  it('when the model suggested a contract, then its outcome, the suggestion and how to follow it are shown', () => {
    expect(assistanceRows(assistance())).toEqual([
      [
        'assistance',
        'suggested — asked because no contract matched; openai gpt-test, 3 contract(s) offered, 840 ms, 120 + 30 tokens',
      ],
      [
        'suggested',
        'Weekly report (wfc_1): It asks for a weekly summary.  (an invocation follows it only with workflow_contract_id wfc_1)',
      ],
    ]);
    expect(assistanceRows(assistance({ routing: 'allowed', trigger: 'tie' }))[1]![1]).toContain(
      '(invocations may follow it)',
    );
  });

  it('when no call was made or it failed, then the detail says why and the budget warning shows', () => {
    expect(
      assistanceRows(
        assistance({
          outcome: 'budget_exhausted',
          detail: "The day's call budget is used up.",
          suggestion: null,
          latency_ms: null,
          tokens_in: 0,
          tokens_out: 0,
          budget_warning: true,
        }),
      ),
    ).toEqual([
      [
        'assistance',
        'budget_exhausted — asked because no contract matched; openai gpt-test, 3 contract(s) offered  (budget nearly used)',
      ],
      ['no suggestion', "The day's call budget is used up."],
    ]);
  });
});

describe('invocation lines', () => {
  const names = new Map([['agt_1', 'demo-reference-agent']]);

  it('when an agent has a known name, then it is shown with its id', () => {
    expect(agentLabel('agt_1', names)).toBe('demo-reference-agent (agt_1)');
    expect(agentLabel('agt_2', names)).toBe('agt_2');
    expect(agentLabel(null, names)).toBe('-');
  });

  it('when a stage is in progress, then the state line names it, its owner and its progress', () => {
    const current = stage({ state: 'claimed', owner_agent_id: 'agt_1', progress: 'Working' });
    const line = formatStateLine(
      invocation({ current_stage: current, stages: [current, stage({ key: 'write', position: 2 })] }),
      1200,
      names,
    );
    expect(line).toBe(
      '  +1.2 s  running               stage 1/2 collect claimed by demo-reference-agent — Working',
    );
  });

  it('when attention is raised, then the line shows the signal and its reason', () => {
    const line = formatStateLine(
      invocation({ state: 'running', attention: 'stalled', attention_reason: 'no heartbeat' }),
      0,
      names,
    );
    expect(line).toContain('[attention stalled: no heartbeat]');
  });

  it('when the artifact is published, then the line names it', () => {
    const line = formatStateLine(
      invocation({
        state: 'completed',
        artifact: {
          artifact_id: 'art_1',
          schema_name: 's',
          schema_version: '1',
          created_at: '2026-01-01T00:00:00.000Z',
        },
      }),
      3000,
      names,
    );
    expect(line).toBe('  +3.0 s  completed             artifact art_1');
  });

  it('when stages are listed, then the timeline shows owner, state, attempts and duration', () => {
    expect(
      formatStageTable(
        [
          stage({ state: 'completed', owner_agent_id: 'agt_1', duration_ms: 812 }),
          stage({ key: 'write', position: 2, state: 'claimed', owner_agent_id: 'agt_9', attempts: 2 }),
        ],
        names,
        0,
      ),
    ).toEqual([
      '#  STAGE    OWNER                         STATE      ATTEMPTS  DURATION',
      '1  collect  demo-reference-agent (agt_1)  completed         1    812 ms',
      '2  write    agt_9                         claimed           2         -',
    ]);
  });
});

describe('formatJson and firstLine', () => {
  it('when a payload is printed, then every line is indented', () => {
    expect(formatJson({ a: [1] }, 4)).toEqual(['    {', '      "a": [', '        1', '      ]', '    }']);
  });

  it('when a message has several lines, then the first non-empty one is kept', () => {
    expect(firstLine('\nboom\nstack')).toBe('boom');
    expect(firstLine('one')).toBe('one');
  });
});
