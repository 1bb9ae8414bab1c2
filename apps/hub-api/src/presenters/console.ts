import type { HubApi } from '@svc/contracts';
import { canonicalHash } from '@svc/service-kit';
import type { IssuedConsoleTicket } from '../use-cases/console/create-console-ticket';
import type { ConsoleRouteTableRows } from '../use-cases/console/get-console-route-table';

type Schemas = HubApi.components['schemas'];

/**
 * The route table as the console router reads it. `version` is the SHA-256 of the canonical JSON of the table
 * without `generated_at` (and without itself), so equal tables have equal versions and any change to a
 * route, a peer or a member gives a new one.
 */
export function presentConsoleRouteTable(
  table: ConsoleRouteTableRows,
  generatedAt: Date,
): Schemas['ConsoleRouteTable'] {
  const content = {
    host_id: table.host.id,
    workspace: { id: table.workspace.id, slug: table.workspace.slug },
    members: table.members,
    routes: table.routes.map((entry): Schemas['ConsoleRoute'] => ({
      agent_id: entry.agent.id,
      agent_name: entry.agent.name,
      route: entry.route,
      serve_port: entry.agent.servePort,
      status: entry.agent.status,
      peers: entry.peers,
    })),
  };
  return { ...content, version: canonicalHash(content), generated_at: generatedAt.toISOString() };
}

export function presentConsoleTicket(issued: IssuedConsoleTicket): Schemas['ConsoleTicket'] {
  return {
    ticket: issued.ticket,
    expires_at: issued.expiresAt.toISOString(),
    agent_id: issued.agentId,
    workspace_id: issued.workspaceId,
  };
}
