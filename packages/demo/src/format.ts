/**
 * Pure text helpers for the demo's output: aligned label/value rows and tables, blockers with their
 * recommended actions, durations, pretty JSON and optional colour (only ever on a terminal).
 */
import type { Blocker, Invocation, WorkflowApi } from '@svc/sdk';

/** What resolve's model assistance did, in its explanation (only when the project's model was asked). */
export type Assistance = WorkflowApi.components['schemas']['AssistanceExplanation'];

export interface Style {
  bold(text: string): string;
  dim(text: string): string;
  good(text: string): string;
  bad(text: string): string;
  warn(text: string): string;
}

const plain = (text: string) => text;
const sgr = (open: number, close: number) => (text: string) => `\u001b[${open}m${text}\u001b[${close}m`;

/** ANSI styling when `enabled`, otherwise every function returns its text unchanged. */
export function createStyle(enabled: boolean): Style {
  if (!enabled) return { bold: plain, dim: plain, good: plain, bad: plain, warn: plain };
  return { bold: sgr(1, 22), dim: sgr(2, 22), good: sgr(32, 39), bad: sgr(31, 39), warn: sgr(33, 39) };
}

/** Colour only on a terminal, and never when `NO_COLOR` is set or the terminal is `dumb`. */
export function colourWanted(isTty: boolean | undefined, env: Record<string, string | undefined>): boolean {
  return isTty === true && env.NO_COLOR === undefined && env.TERM !== 'dumb';
}

// eslint-disable-next-line no-control-regex
const ANSI = /\u001b\[[0-9;]*m/g;

/** The printed width of a text (escape sequences take no room). */
export function visibleLength(text: string): number {
  return Array.from(text.replace(ANSI, '')).length;
}

function padEnd(text: string, width: number): string {
  return text + ' '.repeat(Math.max(0, width - visibleLength(text)));
}

function padStart(text: string, width: number): string {
  return ' '.repeat(Math.max(0, width - visibleLength(text))) + text;
}

/**
 * `label  value` rows with the values aligned (labels at least `minLabelWidth` wide, so rows printed in
 * several calls still line up); a multi-line value continues under its first line.
 */
export function formatRows(rows: [string, string][], indent = 2, minLabelWidth = 0): string[] {
  const width = Math.max(minLabelWidth, ...rows.map(([label]) => visibleLength(label)));
  const pad = ' '.repeat(indent);
  return rows.flatMap(([label, value]) => {
    const [first = '', ...rest] = value.split('\n');
    const continuation = ' '.repeat(indent + width + 2);
    return [`${pad}${padEnd(label, width)}  ${first}`.trimEnd(), ...rest.map((line) => continuation + line)];
  });
}

export interface Column {
  header: string;
  align?: 'left' | 'right';
}

/** A table with a header row; each column as wide as its widest cell, two spaces between columns. */
export function formatTable(columns: Column[], rows: string[][], indent = 2): string[] {
  const widths = columns.map((column, i) =>
    Math.max(visibleLength(column.header), ...rows.map((row) => visibleLength(row[i] ?? ''))),
  );
  const pad = ' '.repeat(indent);
  const line = (cells: string[]) =>
    pad +
    columns
      .map((column, i) => {
        const cell = cells[i] ?? '';
        const width = widths[i] ?? 0;
        return column.align === 'right' ? padStart(cell, width) : padEnd(cell, width);
      })
      .join('  ')
      .trimEnd();
  return [line(columns.map((c) => c.header)), ...rows.map((row) => line(row))];
}

export function yesNo(value: boolean, style: Style = createStyle(false)): string {
  return value ? style.good('yes') : style.bad('no');
}

/** `412 ms` (grouped by thousands), or `-` when there is none yet. */
export function formatMs(ms: number | null | undefined): string {
  if (ms === null || ms === undefined || !Number.isFinite(ms)) return '-';
  return `${Math.round(ms).toLocaleString('en-US')} ms`;
}

/** Elapsed time since the start of a step, e.g. `+1.4 s`. */
export function formatElapsed(ms: number): string {
  return `+${(Math.max(0, ms) / 1000).toFixed(1)} s`;
}

/** Each blocker on its own lines: `category / code (stage …): message`, then `→ recommended action`. */
export function formatBlockers(blockers: Blocker[]): string {
  if (blockers.length === 0) return 'none';
  return blockers
    .map((b) => {
      const stage = b.stage_key ? ` (stage ${b.stage_key})` : '';
      return `${b.category} / ${b.code}${stage}: ${b.message}\n  → ${b.recommended_action}`;
    })
    .join('\n');
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export interface WinnerExplanation {
  rule: string | null;
  reason: string | null;
  normalizedIntent: string | null;
  candidates: number;
  unlisted: number;
  activeContracts: number | null;
}

/** The parts of resolve's explanation worth printing; tolerant of an explanation it does not know. */
export function explainWinner(explanation: unknown): WinnerExplanation {
  const e = isRecord(explanation) ? explanation : {};
  const text = (value: unknown) => (typeof value === 'string' ? value : null);
  const count = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) ? value : null);
  return {
    rule: text(e.winner_rule),
    reason: text(e.winner_reason),
    normalizedIntent: text(e.normalized_intent),
    candidates: Array.isArray(e.candidates) ? e.candidates.length : 0,
    unlisted: count(e.unlisted_contracts) ?? 0,
    activeContracts: count(e.active_contracts),
  };
}

const ASSISTANCE_TRIGGERS: Record<Assistance['trigger'], string> = {
  no_match: 'no contract matched',
  tie: 'a tie was broken by the oldest contract',
};

/**
 * What resolve's model assistance did, as rows: nothing when the project's model was not asked; otherwise why it
 * was asked, its outcome, and the contract it suggested (with how an invocation may follow it) or why none.
 */
export function assistanceRows(
  assistance: Assistance | undefined,
  style: Style = createStyle(false),
): [string, string][] {
  if (!assistance) return [];
  const a = assistance;
  const latency = a.latency_ms === null ? '' : `, ${formatMs(a.latency_ms)}`;
  const tokens = a.tokens_in + a.tokens_out > 0 ? `, ${a.tokens_in} + ${a.tokens_out} tokens` : '';
  const budget = a.budget_warning ? style.warn('  (budget nearly used)') : '';
  const rows: [string, string][] = [
    [
      'assistance',
      `${a.outcome} — asked because ${ASSISTANCE_TRIGGERS[a.trigger]}; ${a.provider} ${a.model}, ` +
        `${a.contracts_offered} contract(s) offered${latency}${tokens}${budget}`,
    ],
  ];
  if (a.suggestion) {
    const follow =
      a.routing === 'allowed'
        ? 'invocations may follow it'
        : `an invocation follows it only with workflow_contract_id ${a.suggestion.contract_id}`;
    rows.push([
      'suggested',
      `${a.suggestion.name} (${a.suggestion.contract_id}): ${a.suggestion.reason}${style.dim(`  (${follow})`)}`,
    ]);
  } else {
    rows.push(['no suggestion', a.detail]);
  }
  return rows;
}

/** `name (id)` when the id has a known name, else the id; `-` when there is none. */
export function agentLabel(id: string | null | undefined, names: ReadonlyMap<string, string>): string {
  if (!id) return '-';
  const name = names.get(id);
  return name ? `${name} (${id})` : id;
}

/** One line per observed change of an invocation while waiting for its artifact. */
export function formatStateLine(
  invocation: Invocation,
  elapsedMs: number,
  names: ReadonlyMap<string, string>,
): string {
  const parts = [formatElapsed(elapsedMs).padStart(8), invocation.state.padEnd(20)];
  const stage = invocation.current_stage;
  if (stage) {
    const owner = stage.owner_agent_id
      ? ` by ${names.get(stage.owner_agent_id) ?? stage.owner_agent_id}`
      : '';
    const progress = stage.progress ? ` — ${stage.progress}` : '';
    parts.push(
      `stage ${stage.position}/${invocation.stages.length} ${stage.key} ${stage.state}${owner}${progress}`,
    );
  } else if (invocation.artifact) {
    parts.push(`artifact ${invocation.artifact.artifact_id}`);
  }
  if (invocation.attention !== 'none') {
    parts.push(
      `[attention ${invocation.attention}${invocation.attention_reason ? `: ${invocation.attention_reason}` : ''}]`,
    );
  }
  return parts.join('  ').trimEnd();
}

/** The stage timeline: position, key, owner agent, state, attempts and duration. */
export function formatStageTable(
  stages: Invocation['stages'],
  names: ReadonlyMap<string, string>,
  indent = 2,
): string[] {
  return formatTable(
    [
      { header: '#', align: 'right' },
      { header: 'STAGE' },
      { header: 'OWNER' },
      { header: 'STATE' },
      { header: 'ATTEMPTS', align: 'right' },
      { header: 'DURATION', align: 'right' },
    ],
    stages.map((s) => [
      String(s.position),
      s.key,
      agentLabel(s.owner_agent_id, names),
      s.state,
      String(s.attempts),
      formatMs(s.duration_ms),
    ]),
    indent,
  );
}

/** JSON with two-space indentation, every line prefixed with `indent` spaces. */
export function formatJson(value: unknown, indent = 2): string[] {
  const pad = ' '.repeat(indent);
  return (JSON.stringify(value, null, 2) ?? 'undefined').split('\n').map((line) => pad + line);
}

/** The first line of an error's message, for the one-line failure report. */
export function firstLine(message: string): string {
  return message.split('\n').find((line) => line.trim() !== '') ?? message;
}
