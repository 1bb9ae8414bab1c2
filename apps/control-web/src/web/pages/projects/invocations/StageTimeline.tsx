import { BOX, fit, MIN_WIDTH, timelineBoxes, timelineWidth } from './timeline-model';
import type { Invocation } from './timeline-model';

const ARROW = 'timeline-arrow';

/**
 * The run as a picture (SVG): a start node (launch), the stages in order as boxes — title, state, owner
 * agent, handoff on the arrow into it, waits, blocker or progress, attempts and timestamps — and an end node
 * (the artifact). The current stage is outlined and labelled; a stage waiting for an owner is dashed. The
 * same facts are listed as text for screen readers.
 */
export function StageTimeline({
  invocation,
  agentNames,
}: {
  invocation: Invocation;
  agentNames: ReadonlyMap<string, string>;
}) {
  const boxes = timelineBoxes(invocation, agentNames);
  const content = timelineWidth(boxes.length);
  const width = Math.max(content, MIN_WIDTH);
  const height = BOX.top + BOX.height + 56;
  const mid = BOX.top + BOX.height / 2;
  const startX = BOX.pad + BOX.node;
  const endX = content - BOX.pad - BOX.node;
  const launched = boxes[0]?.stage.assigned_at ?? null;
  const done = invocation.state === 'completed';
  const ended = ['completed', 'failed', 'cancelled'].includes(invocation.state);
  const attention = invocation.attention !== 'none';
  const summary = `Invocation ${invocation.state}${attention ? `, attention ${invocation.attention}` : ''}: ${boxes
    .map((b) => `${b.stage.position}. ${b.stage.title} ${b.stage.state}`)
    .join('; ')}`;

  return (
    <figure className="timeline">
      {/* Scrolls sideways on narrow screens: focusable, so the keyboard can scroll it too. */}
      <div className="timeline-scroll" tabIndex={0} role="group" aria-label="Stage timeline drawing">
        <svg
          role="img"
          aria-labelledby="timeline-title timeline-desc"
          viewBox={`0 0 ${width} ${height}`}
          width={width}
          height={height}
          className="timeline-svg"
          data-state={invocation.state}
        >
          <title id="timeline-title">Stage timeline</title>
          <desc id="timeline-desc">{summary}</desc>
          <defs>
            <marker
              id={ARROW}
              viewBox="0 0 10 10"
              refX="9"
              refY="5"
              markerWidth="7"
              markerHeight="7"
              orient="auto"
            >
              <path d="M0,0 L10,5 L0,10 z" className="arrow-head" />
            </marker>
          </defs>
          <text x={BOX.pad} y={24} className="tl-heading">
            {`Run: ${invocation.state.replace(/_/g, ' ')}`}
            {attention && (
              <tspan className="tl-attention">{`   ⚠ attention: ${invocation.attention.replace(/_/g, ' ')}${
                invocation.attention_reason
                  ? ` — ${fit(invocation.attention_reason, Math.floor((width - 330) / 9))}`
                  : ''
              }`}</tspan>
            )}
          </text>

          <circle
            cx={startX}
            cy={mid}
            r={BOX.node}
            className={`tl-node ${boxes.length > 0 ? 'tl-node-done' : ''}`}
          />
          <text x={startX} y={mid + BOX.node + 18} className="tl-node-label" textAnchor="middle">
            launch
          </text>
          {launched && (
            <text x={startX} y={mid + BOX.node + 34} className="tl-node-time" textAnchor="middle">
              {new Date(launched).toLocaleTimeString()}
            </text>
          )}

          {boxes.map((box, index) => {
            const fromX = index === 0 ? startX + BOX.node : boxes[index - 1]!.x + BOX.width;
            const reached = box.stage.state !== 'pending' && box.stage.state !== 'skipped';
            return (
              <g
                key={box.stage.stage_id}
                className="tl-stage"
                data-stage={box.stage.key}
                data-state={box.stage.state}
              >
                <line
                  x1={fromX}
                  y1={mid}
                  x2={box.x - 2}
                  y2={mid}
                  className={`tl-edge ${reached ? 'tl-edge-done' : ''}`}
                  markerEnd={`url(#${ARROW})`}
                />
                {box.handoff && (
                  <text x={(fromX + box.x) / 2} y={mid - 8} className="tl-edge-label" textAnchor="middle">
                    <title>{`handoff ${box.handoff}`}</title>
                    handoff
                  </text>
                )}
                {box.current && (
                  <text x={box.x} y={BOX.top - 10} className="tl-current-label">
                    ▶ current stage
                  </text>
                )}
                <rect
                  x={box.x}
                  y={BOX.top}
                  width={BOX.width}
                  height={BOX.height}
                  rx={8}
                  className={`tl-box tl-${box.stage.state} ${box.current ? 'tl-current' : ''} ${box.waiting ? 'tl-waiting' : ''}`}
                />
                <text x={box.x + 12} y={BOX.top + 22} className="tl-title">
                  {fit(`${box.stage.position}. ${box.stage.title}`, 25)}
                </text>
                <rect
                  x={box.x + 12}
                  y={BOX.top + 32}
                  width={96}
                  height={20}
                  rx={10}
                  className={`tl-pill tl-pill-${box.stage.state}`}
                />
                <text x={box.x + 60} y={BOX.top + 46} className="tl-pill-text" textAnchor="middle">
                  {box.stage.state}
                </text>
                {box.lines.map((line, i) => (
                  <text
                    key={i}
                    x={box.x + 12}
                    y={BOX.top + 72 + i * 16}
                    className={`tl-line ${line.tone ? `tl-${line.tone}` : ''}`}
                  >
                    {line.text}
                  </text>
                ))}
              </g>
            );
          })}

          {boxes.length > 0 && (
            <line
              x1={boxes[boxes.length - 1]!.x + BOX.width}
              y1={mid}
              x2={endX - BOX.node - 2}
              y2={mid}
              className={`tl-edge ${done ? 'tl-edge-done' : ''}`}
              markerEnd={`url(#${ARROW})`}
            />
          )}
          <circle
            cx={endX}
            cy={mid}
            r={BOX.node}
            className={`tl-node ${done ? 'tl-node-done' : ended ? 'tl-node-ended' : ''}`}
          />
          <text x={endX} y={mid + 5} className="tl-node-mark" textAnchor="middle">
            {done ? '✓' : ended ? '✗' : ''}
          </text>
          <text x={endX} y={mid + BOX.node + 18} className="tl-node-label" textAnchor="middle">
            {invocation.artifact
              ? 'artifact'
              : invocation.state === 'waiting_for_artifact'
                ? 'awaiting artifact'
                : 'artifact'}
          </text>
          {invocation.artifact && (
            <text x={endX} y={mid + BOX.node + 34} className="tl-node-time" textAnchor="middle">
              {new Date(invocation.artifact.created_at).toLocaleTimeString()}
            </text>
          )}
        </svg>
      </div>
      <figcaption className="muted small">
        Stages in order with their owners; “handoff” marks an assignment, a dashed box waits for an owner.
      </figcaption>
      <ol className="visually-hidden">
        {boxes.map((box) => (
          <li key={box.stage.stage_id}>
            {box.stage.title} ({box.stage.key}): {box.stage.state}
            {box.current ? ', current stage' : ''}. {box.lines.map((l) => l.text).join('. ')}
          </li>
        ))}
      </ol>
    </figure>
  );
}
