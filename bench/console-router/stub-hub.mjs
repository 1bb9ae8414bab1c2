// The hub as bench/console-router.mjs's routers see it, served in the bench process: the JWKS of a key made
// there, and console route tables. The measured agent's route is the same in every table.
import { createHash } from 'node:crypto';
import http from 'node:http';

export const WORKSPACE = { id: 'ws_bench', slug: 'bench' };
/** The member whose participant JWT goes with every router request. */
export const PARTICIPANT = 'prt_bench';
export const TARGET_AGENT = 'agt_target';
/** The measured agent's route, the same behind every proxy. */
export const ROUTE = `/${WORKSPACE.slug}/agents/${TARGET_AGENT}`;

/**
 * A host's console route table of `size` routes as the hub sends it (sorted by route, with its version): the
 * measured agent's route to `echoPort`, every other route on a distinct port nobody listens on; `started`: more
 * agent ids routed to `echoPort`.
 */
export function routeTable(hostId, size, echoPort, started = []) {
  const routes = [];
  // Agents started since (the scale bench's propagation): online, on the echo port too.
  for (const agentId of started)
    routes.push({
      agent_id: agentId,
      agent_name: agentId,
      route: `/${WORKSPACE.slug}/agents/${agentId}`,
      serve_port: echoPort,
      status: 'online',
      peers: [],
    });
  // Ports of agents that are not listening: distinct, never the upstream's; the router only connects on a request.
  let port = 20_000;
  for (let i = 0; i < size - 1; i += 1) {
    if (port === echoPort) port += 1;
    const agentId = `agt_filler${String(i).padStart(5, '0')}`;
    routes.push({
      agent_id: agentId,
      agent_name: `filler ${i}`,
      route: `/${WORKSPACE.slug}/agents/${agentId}`,
      serve_port: port,
      status: 'idle',
      peers: [],
    });
    port += 1;
  }
  routes.push({
    agent_id: TARGET_AGENT,
    agent_name: 'target',
    route: ROUTE,
    serve_port: echoPort,
    status: 'online',
    peers: [],
  });
  // Sorted by route as the hub sends them: `agt_target` comes last, the worst place for a scan.
  routes.sort((a, b) => (a.route < b.route ? -1 : a.route > b.route ? 1 : 0));
  const content = { host_id: hostId, workspace: WORKSPACE, members: [PARTICIPANT], routes };
  const version = createHash('sha256').update(JSON.stringify(content)).digest('hex');
  return {
    version,
    body: JSON.stringify({ data: { ...content, version, generated_at: new Date().toISOString() } }),
  };
}

/**
 * The stub hub: the JWKS and each host's route table of `tables` (by host id), behind the runtime key, with
 * ETag and 304 on If-None-Match as the hub answers; `counts` says what it served.
 */
export async function startStubHub({ jwks, runtimeKey, tables }) {
  const counts = { jwks: 0, table: 0, not_modified: 0, refused: 0 };
  const jwksBody = JSON.stringify(jwks);
  const server = http.createServer((req, res) => {
    req.resume();
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    const json = (status, body, headers = {}) =>
      res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(body);
    if (req.method === 'GET' && url.pathname === '/.well-known/jwks.json') {
      counts.jwks += 1;
      return json(200, jwksBody);
    }
    const match = /^\/api\/v1\/runtime-hosts\/([^/]+)\/console-routes$/.exec(url.pathname);
    const table = match && tables.get(match[1]);
    if (req.method === 'GET' && table) {
      const bearer = req.headers.authorization?.replace(/^Bearer /i, '');
      if (req.headers['x-api-key'] !== runtimeKey && bearer !== runtimeKey) {
        counts.refused += 1;
        return json(401, JSON.stringify({ code: 'credential_invalid' }));
      }
      const etag = `"${table.version}"`;
      const seen = (req.headers['if-none-match'] ?? '').split(',').map((v) => v.trim().replace(/^W\//, ''));
      if (seen.includes(etag) || seen.includes(table.version)) {
        counts.not_modified += 1;
        return res.writeHead(304, { etag }).end();
      }
      counts.table += 1;
      return json(200, table.body, { etag });
    }
    json(404, JSON.stringify({ code: 'not_found' }));
  });
  await new Promise((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    counts,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
