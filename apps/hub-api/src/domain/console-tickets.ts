/** A console ticket is valid this long: enough to open a WebSocket or an event stream, too short to share. */
export const CONSOLE_TICKET_TTL_SECONDS = 60;

/**
 * The private claims of a console ticket (audience `console`): `ws` the workspace id and `agent` the agent id
 * it opens. The console router and the agent check both against the route before accepting the ticket.
 */
export function consoleTicketClaims(workspaceId: string, agentId: string): { ws: string; agent: string } {
  return { ws: workspaceId, agent: agentId };
}
