import type { HubDeps } from '../deps';
import { ifNoneMatchHits, quotedEtag } from '../domain/etag';
import { presentConsoleRouteTable, presentConsoleTicket } from '../presenters/console';
import { createConsoleTicket } from '../use-cases/console/create-console-ticket';
import { getConsoleRouteTable } from '../use-cases/console/get-console-route-table';
import type { HubHandlers } from './types';
import { participantOf } from './types';

export function consoleHandlers(deps: HubDeps): HubHandlers<'getConsoleRouteTable' | 'createConsoleTicket'> {
  return {
    async getConsoleRouteTable(ctx) {
      const rows = await getConsoleRouteTable(deps, ctx.actor, ctx.params.hostId);
      const table = presentConsoleRouteTable(rows, deps.now());
      const headers = { ETag: quotedEtag(table.version) };
      // Polled every few seconds: an unchanged table costs the router a 304 without a body.
      if (ifNoneMatchHits(ctx.req.headers['if-none-match'], table.version)) return { status: 304, headers };
      return { status: 200, body: { data: table }, headers };
    },
    async createConsoleTicket(ctx) {
      const issued = await createConsoleTicket(
        deps,
        participantOf(ctx.actor),
        ctx.params.agentId,
        ctx.requestId,
      );
      return {
        status: 201,
        body: { data: presentConsoleTicket(issued) },
        headers: { 'Cache-Control': 'no-store' },
      };
    },
  };
}
