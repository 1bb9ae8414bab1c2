import { randomUUID } from 'node:crypto';
import { ApiError, createHubClient, unwrap } from '@svc/contracts';
import type { HubClient } from '@svc/contracts';
import { lastInboxId, readInboxFrom } from '../../data/agent-inbox';
import type { InboxReader, PeerMessage } from '../../data/agent-inbox';
import { readAgentState } from '../../data/agent-state';
import { findAgentByName } from '../../data/host-agents';
import { CliError, usageError } from '../../domain/cli-error';
import { checkAgentName } from '../../domain/direct-start-rules';
import { EXIT } from '../../domain/exit-codes';

export interface AskAgentInput {
  /** Participant or runtime-key client: finds agents by name and reads the target's inbox. */
  hub: HubClient;
  hubUrl: string;
  workspace: string;
  stateDir: string;
  clientName: string;
  target: string;
  message: string;
  /** Name of an agent started on this host to ask as (its AGENT_TOKEN from local state); else the participant. */
  from?: string | undefined;
  timeoutSeconds: number;
  progress: <R>(label: string, work: () => Promise<R>) => Promise<R>;
  pollMs?: number;
}

export interface AskAgentResult {
  correlation_id: string;
  message_id: string;
  to: { agent_id: string; name: string };
  from: { kind: 'agent' | 'participant'; agent_id: string | null; name: string | null };
  reply: { message_id: string; body: string; created_at: string };
  elapsed_ms: number;
}

/**
 * `svc ask <agent> <message>`: sends a message of kind `ask` with a fresh `correlation_id` and waits for the
 * reply carrying the same id.
 *
 * As an agent (`--from`), the ask goes out with that agent's AGENT_TOKEN, so the hub applies the peer rule
 * (403 `peer_message_forbidden` for agents sharing no team or active project assignment), and the reply is
 * the target's `ask` message in the asking agent's inbox. A participant has no inbox: the target answers a
 * participant's ask with a message to itself (the one sender every agent may always message), so the reply
 * is read from the target's own inbox, as `svc internal inbox` reads it. Either way the reply is the message
 * from the target agent with the ask's `correlation_id`; the deadline is exit 5.
 */
export async function askAgent(input: AskAgentInput): Promise<AskAgentResult> {
  const targetName = checkAgentName(input.target);
  if (input.timeoutSeconds < 1 || input.timeoutSeconds > 3600) {
    throw usageError(
      'timeout_invalid',
      '--timeout-seconds must be from 1 to 3600',
      'pass --timeout-seconds <n>',
    );
  }
  const target = await findAgentByName(input.hub, input.workspace, targetName);
  if (!target) {
    throw new CliError({
      code: 'agent_not_found',
      message: `no agent named "${targetName}" in workspace ${input.workspace}`,
      fix: 'check the name with `svc list`',
    });
  }

  let sender: HubClient = input.hub;
  let from: AskAgentResult['from'] = { kind: 'participant', agent_id: null, name: null };
  let reader: InboxReader = { kind: 'operator', hub: input.hub, agentId: target.id };
  if (input.from !== undefined) {
    const fromName = checkAgentName(input.from);
    const state = await readAgentState(input.stateDir, fromName);
    if (!state) {
      throw new CliError({
        code: 'ask_sender_not_local',
        message: `agent "${fromName}" was not started on this host, so svc has no AGENT_TOKEN to ask as it`,
        fix: `svc start --name ${fromName} on this host, or leave out --from to ask as the participant`,
      });
    }
    sender = createHubClient({
      baseUrl: input.hubUrl,
      token: state.agent_token,
      clientName: input.clientName,
    });
    from = { kind: 'agent', agent_id: state.agent_id, name: fromName };
    reader = { kind: 'agent', hub: sender };
  }

  const correlationId = `ask-${randomUUID()}`;
  const began = Date.now();
  const after = await lastInboxId(reader);
  let sent: PeerMessage;
  try {
    sent = unwrap(
      await sender.POST('/api/v1/agents/{agentId}/messages', {
        params: { path: { agentId: target.id } },
        body: { kind: 'ask', body: input.message, correlation_id: correlationId },
      }),
    );
  } catch (error) {
    if (error instanceof ApiError && error.code === 'peer_message_forbidden') {
      throw new CliError({
        code: 'peer_message_forbidden',
        message: `${from.name ?? 'the caller'} may not message ${targetName}: agents must share a team or an active project assignment`,
        fix: `add both agents to one team, or ask as the participant (without --from)`,
        details: { status: 403 },
      });
    }
    throw error;
  }

  const isReply = (m: PeerMessage) =>
    m.correlation_id === correlationId &&
    m.from.kind === 'agent' &&
    m.from.id === target.id &&
    m.id !== sent.id;
  const deadline = began + input.timeoutSeconds * 1000;
  const reply = await input.progress(`Waiting for ${targetName} to answer`, async () => {
    let cursor = after;
    for (;;) {
      const fresh = await readInboxFrom(reader, cursor);
      const found = fresh.find(isReply);
      if (found) return found;
      if (fresh.length > 0) cursor = fresh[fresh.length - 1]!.id;
      if (Date.now() >= deadline) return undefined;
      await new Promise((resolve) =>
        setTimeout(resolve, Math.min(input.pollMs ?? 500, Math.max(0, deadline - Date.now()))),
      );
    }
  });
  if (!reply) {
    throw new CliError({
      code: 'ask_timeout',
      message: `${targetName} did not answer within ${input.timeoutSeconds} s (correlation_id ${correlationId})`,
      fix: `check that ${targetName} runs (svc list) and reads its inbox (svc internal inbox --name ${targetName})`,
      exit: EXIT.timeout,
      details: { correlation_id: correlationId, message_id: sent.id },
    });
  }
  return {
    correlation_id: correlationId,
    message_id: sent.id,
    to: { agent_id: target.id, name: targetName },
    from,
    reply: { message_id: reply.id, body: reply.body, created_at: reply.created_at },
    elapsed_ms: Date.now() - began,
  };
}
