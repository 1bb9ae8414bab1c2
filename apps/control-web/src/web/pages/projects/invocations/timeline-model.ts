import type { WorkflowApi } from '@svc/sdk';

export type Invocation = WorkflowApi.components['schemas']['InvocationsInvocation'];
export type Stage = WorkflowApi.components['schemas']['InvocationsStage'];

/** One line of text in a stage's box, with the class that colours it. */
export interface StageLine {
  text: string;
  tone?: 'muted' | 'warn' | 'ok' | 'danger';
}

export interface StageBox {
  stage: Stage;
  x: number;
  current: boolean;
  /** Waiting for an owner: not assigned yet although the run reached it (or an agent is being spawned). */
  waiting: boolean;
  /** The handoff that gave the stage its owner, drawn on the arrow into it. */
  handoff: string | null;
  lines: StageLine[];
}

export const BOX = { width: 236, height: 172, gap: 64, pad: 24, top: 56, node: 18 } as const;
/** The drawing is never narrower than this, so the heading (state, attention) has room. */
export const MIN_WIDTH = 760;

const time = (iso: string | null) => (iso ? new Date(iso).toLocaleTimeString() : undefined);

function duration(ms: number | null): string | undefined {
  if (ms === null) return undefined;
  if (ms < 1000) return `${ms} ms`;
  const s = ms / 1000;
  return s < 60 ? `${s.toFixed(1)} s` : `${Math.floor(s / 60)} min ${Math.round(s % 60)} s`;
}

/** Cuts text to `max` characters with an ellipsis (SVG text does not wrap). */
export function fit(text: string, max: number): string {
  const chars = Array.from(text);
  return chars.length > max ? `${chars.slice(0, max - 1).join('')}…` : text;
}

/**
 * The boxes of the stage timeline: stages in order, each with its owner (the agent's name when known), how
 * it got it (handoff), waits, blocker or progress, attempts and timestamps; the current stage marked.
 */
export function timelineBoxes(invocation: Invocation, agentNames: ReadonlyMap<string, string>): StageBox[] {
  const stages = [...invocation.stages].sort((a, b) => a.position - b.position);
  const currentId = invocation.current_stage?.stage_id;
  const terminal = ['completed', 'failed', 'cancelled'].includes(invocation.state);
  return stages.map((stage, index) => {
    const current = !terminal && stage.stage_id === currentId;
    const waiting = current && stage.state === 'pending';
    const owner = stage.owner_agent_id
      ? `owner ${agentNames.get(stage.owner_agent_id) ?? stage.owner_agent_id}`
      : stage.owner_spawn
        ? `spawning ${stage.owner_spawn.agent_name} (${stage.owner_spawn.state})`
        : waiting
          ? 'waiting for an owner'
          : 'no owner';
    const needs = stage.required_capabilities.join(', ') || 'no capability';
    const lines: StageLine[] = [
      { text: fit(`${stage.key} · needs ${needs}`, 34), tone: 'muted' },
      { text: fit(owner, 34), tone: stage.owner_agent_id ? undefined : waiting ? 'warn' : 'muted' },
    ];
    if (stage.assigned_at) lines.push({ text: `assigned ${time(stage.assigned_at)}`, tone: 'muted' });
    if (stage.claimed_at) lines.push({ text: `claimed ${time(stage.claimed_at)}`, tone: 'muted' });
    if (stage.completed_at) {
      const took = stage.duration_ms !== null ? ` in ${duration(stage.duration_ms)}` : '';
      lines.push({ text: fit(`done ${time(stage.completed_at)}${took}`, 34), tone: 'ok' });
    } else if (stage.last_heartbeat_at)
      lines.push({ text: `heartbeat ${time(stage.last_heartbeat_at)}`, tone: 'muted' });
    if (stage.blocker_reason)
      lines.push({ text: fit(`blocked: ${stage.blocker_reason}`, 34), tone: 'danger' });
    else if (stage.progress && !stage.completed_at)
      lines.push({ text: fit(stage.progress, 34), tone: 'muted' });
    if (stage.attempts > 1) lines.push({ text: `attempt ${stage.attempts}`, tone: 'warn' });
    return {
      stage,
      x: BOX.pad + BOX.node * 2 + BOX.gap + index * (BOX.width + BOX.gap),
      current,
      waiting,
      handoff: stage.handoff_id,
      lines: lines.slice(0, 6),
    };
  });
}

/** The drawing's width for `count` stages: start node, boxes with gaps, end node. */
export function timelineWidth(count: number): number {
  return BOX.pad * 2 + BOX.node * 4 + BOX.gap * 2 + count * BOX.width + Math.max(0, count - 1) * BOX.gap;
}
