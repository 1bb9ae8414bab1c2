import type { AskAgentResult } from '../use-cases/agents/ask-agent';
import type { ListAgentInboxResult } from '../use-cases/agents/list-agent-inbox';
import type { ListAgentsResult } from '../use-cases/agents/list-agents';
import type { StartAgentResult } from '../use-cases/agents/start-agent';
import type { StopAgentResult } from '../use-cases/agents/stop-agent';

/** Human lines of `svc start`. */
export function startLines(r: StartAgentResult): string[] {
  const lines = [
    `${r.registered ? 'Registered and started' : 'Started'} ${r.name} (${r.agent_id}) on ${r.runtime_instance_id}: ${r.status}`,
  ];
  if (r.recovered_from_provider_model_not_found) {
    lines.push(
      '  recovered: the previous process ended with ProviderModelNotFoundError; its runtime home was cleared',
    );
  }
  lines.push(`  pid          ${r.pid ?? '-'}`);
  lines.push(`  model        ${r.model ?? '-'} (provider auth: ${r.authorization_source})`);
  lines.push(`  workdir      ${r.workdir}`);
  lines.push(`  serve port   ${r.serve_port ?? '-'}`);
  if (r.console_url) lines.push(`  console      ${r.console_url}`);
  lines.push(`  log          ${r.log_file}`);
  lines.push(
    `  verified     listener ${r.verification.listener ? 'yes' : 'no'}, hub ${r.verification.hub_status}, running agents ${r.verification.running_agents_before} -> ${r.verification.running_agents_after ?? '?'}`,
  );
  return lines;
}

export function stopLines(r: StopAgentResult): string[] {
  return [
    `Stopped ${r.name}: ${r.process_stopped ? `process ${r.pid ?? ''} ended` : 'no process was running here'}, hub status ${r.status}.`,
    `  agent id ${r.agent_id} is kept: svc start --name ${r.name} starts it again.`,
    `  local running state ${r.local_state_cleared ? 'cleared' : 'was already clear'}; no sandbox container exists on this platform.`,
  ];
}

function pad(cells: string[][]): string[] {
  const widths = cells[0]!.map((_, i) => Math.max(...cells.map((row) => row[i]!.length)));
  return cells.map((row) =>
    row
      .map((cell, i) => cell.padEnd(widths[i]!))
      .join('  ')
      .trimEnd(),
  );
}

export function listLines(r: ListAgentsResult): string[] {
  const head = `Agents on ${r.runtime_instance_id}${r.runtime_running ? '' : ' (the local runtime is not running)'}:`;
  if (r.agents.length === 0) return [head, '  none'];
  const rows = [
    ['NAME', 'STATUS', 'PROCESS', 'PID', 'PORT', 'ID', 'CONSOLE'],
    ...r.agents.map((a) => [
      a.name,
      a.status,
      a.process?.state ?? '-',
      a.process?.pid != null ? String(a.process.pid) : '-',
      a.serve_port !== null ? String(a.serve_port) : '-',
      a.agent_id,
      a.console_url ?? '-',
    ]),
  ];
  return [head, ...pad(rows).map((line) => `  ${line}`)];
}

export function askLines(r: AskAgentResult): string[] {
  return [`${r.to.name}: ${r.reply.body}`];
}

export function inboxLines(r: ListAgentInboxResult): string[] {
  const lines = [`Inbox of ${r.name} (${r.agent_id}): ${r.total} message(s), ${r.unread} unread`];
  for (const m of r.messages) {
    const from = m.from.kind === 'agent' ? `agent ${m.from.id ?? '?'}` : m.from.kind;
    lines.push(
      `  ${m.created_at}  ${m.kind.padEnd(7)} ${m.read_at ? 'read  ' : 'unread'}  from ${from}${m.correlation_id ? `  [${m.correlation_id}]` : ''}`,
    );
    lines.push(`    ${m.body.length > 200 ? `${m.body.slice(0, 200)}…` : m.body}`);
  }
  return lines;
}
