import type { HubApi } from '@svc/contracts';
import type { Message } from '../generated/prisma/client';

type Schemas = HubApi.components['schemas'];

const iso = (d: Date) => d.toISOString();
const isoOrNull = (d: Date | null) => (d ? d.toISOString() : null);

export function presentPeerMessage(m: Message): Schemas['PeerMessage'] {
  return {
    id: m.id,
    workspace_id: m.workspaceId,
    to_agent_id: m.toAgentId,
    from: { kind: m.fromKind as Schemas['PeerMessage']['from']['kind'], id: m.fromId },
    kind: m.kind as Schemas['PeerMessageKind'],
    body: m.body,
    correlation_id: m.correlationId,
    created_at: iso(m.createdAt),
    read_at: isoOrNull(m.readAt),
  };
}
