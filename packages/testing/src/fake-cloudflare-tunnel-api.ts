import { randomBytes, randomUUID } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A local stand-in for the part of Cloudflare's v4 API the hub's tunnel provider uses, answering with the
 * real envelope `{ success, errors, messages, result }`, the real error codes (1013 name taken, 1022 active
 * connections, 81053 record exists, 81044 record missing) and connector tokens in Cloudflare's format
 * (base64 of `{"a": account, "t": tunnel id, "s": secret}`). Everything it received is kept for assertions.
 */

export interface FakeTunnel {
  id: string;
  name: string;
  account_tag: string;
  created_at: string;
  deleted_at: string | null;
  status: 'inactive' | 'degraded' | 'healthy' | 'down';
  remote_config: boolean;
  connections: Array<{ id: string; colo_name: string; opened_at: string; client_id: string }>;
  tun_type: 'cfd_tunnel';
  secret: string;
  config: { ingress: Array<{ hostname?: string; service: string }> } | null;
}

export interface FakeDnsRecord {
  id: string;
  zone_id: string;
  name: string;
  type: string;
  content: string;
  proxied: boolean;
  ttl: number;
  comment?: string;
}

export interface FakeRequest {
  method: string;
  path: string;
  query: Record<string, string>;
  body: unknown;
  status: number;
  errorCodes: number[];
}

export interface FakeCloudflare {
  url: string;
  apiUrl: string;
  accountId: string;
  zoneId: string;
  apiToken: string;
  tunnels: Map<string, FakeTunnel>;
  dns: Map<string, FakeDnsRecord>;
  requests: FakeRequest[];
  /** The connector token Cloudflare would hand out for a tunnel. */
  tokenOf(tunnelId: string): string;
  /** A connector registers; `reconnects` keeps it connected through a connections clean-up. */
  connect(tunnelId: string, options?: { reconnects?: boolean }): void;
  /** The next tunnel list answers empty (the list lags behind a create made by someone else). */
  hideNextTunnelList(): void;
  /** The next DNS list answers empty (a record created concurrently is not listed yet). */
  hideNextDnsList(): void;
  close(): Promise<void>;
}

/** The request bodies the fake reads (tunnel create, configuration put, DNS record create or patch). */
interface FakeBody {
  name?: string;
  config_src?: string;
  config?: { ingress?: Array<{ hostname?: string; service: string }> };
  type?: string;
  content?: string;
  proxied?: boolean;
  ttl?: number;
  comment?: string;
}

function envelope(result: unknown, errors: Array<{ code: number; message: string }> = []) {
  return { success: errors.length === 0, errors, messages: [], result: errors.length === 0 ? result : null };
}

export async function startFakeCloudflare(): Promise<FakeCloudflare> {
  const accountId = randomBytes(16).toString('hex');
  const zoneId = randomBytes(16).toString('hex');
  const apiToken = randomBytes(30).toString('base64url');
  const tunnels = new Map<string, FakeTunnel>();
  const dns = new Map<string, FakeDnsRecord>();
  const requests: FakeRequest[] = [];
  const reconnecting = new Set<string>();
  let hideTunnelList = 0;
  let hideDnsList = 0;

  const tokenOf = (tunnelId: string) => {
    const tunnel = tunnels.get(tunnelId)!;
    return Buffer.from(JSON.stringify({ a: accountId, t: tunnel.id, s: tunnel.secret })).toString('base64');
  };
  const publicTunnel = (t: FakeTunnel) => {
    const { secret: _secret, config: _config, ...rest } = t;
    return rest;
  };

  async function readBody(req: IncomingMessage): Promise<unknown> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString('utf8');
    return text ? JSON.parse(text) : undefined;
  }

  function handle(
    method: string,
    parts: string[],
    query: Record<string, string>,
    body: FakeBody | undefined,
  ): { status: number; body: ReturnType<typeof envelope> } {
    const ok = (result: unknown, status = 200) => ({ status, body: envelope(result) });
    const err = (status: number, code: number, message: string) => ({
      status,
      body: envelope(null, [{ code, message }]),
    });
    // /accounts/{acct}/cfd_tunnel[/{id}[/configurations|/token|/connections]]
    if (parts[0] === 'accounts') {
      if (parts[1] !== accountId || parts[2] !== 'cfd_tunnel')
        return err(403, 9109, 'Unauthorized to access requested resource');
      const id = parts[3];
      if (!id) {
        if (method === 'GET') {
          if (hideTunnelList > 0) {
            hideTunnelList -= 1;
            return ok([]);
          }
          const list = [...tunnels.values()].filter(
            (t) =>
              (query.name === undefined || t.name === query.name) &&
              (query.is_deleted !== 'false' || t.deleted_at === null),
          );
          return ok(list.map(publicTunnel));
        }
        if (method === 'POST') {
          if (!body?.name) return err(400, 1001, 'Tunnel name is required');
          if ([...tunnels.values()].some((t) => t.name === body.name && t.deleted_at === null)) {
            return err(409, 1013, 'You already have a tunnel with this name.');
          }
          const tunnel: FakeTunnel = {
            id: randomUUID(),
            name: body.name,
            account_tag: accountId,
            created_at: new Date().toISOString(),
            deleted_at: null,
            status: 'inactive',
            remote_config: body.config_src === 'cloudflare',
            connections: [],
            tun_type: 'cfd_tunnel',
            secret: randomBytes(32).toString('base64'),
            config: null,
          };
          tunnels.set(tunnel.id, tunnel);
          return ok({ ...publicTunnel(tunnel), token: tokenOf(tunnel.id) });
        }
      }
      const tunnel = id ? tunnels.get(id) : undefined;
      if (!tunnel) return err(404, 1003, 'Tunnel not found');
      const sub = parts[4];
      if (!sub && method === 'GET') return ok(publicTunnel(tunnel));
      if (!sub && method === 'DELETE') {
        if (tunnel.deleted_at) return ok(publicTunnel(tunnel));
        if (tunnel.connections.length > 0 && query.cascade !== 'true') {
          return err(400, 1022, 'Cannot delete tunnel because it has active connections');
        }
        tunnel.connections = [];
        tunnel.deleted_at = new Date().toISOString();
        tunnel.status = 'down';
        return ok(publicTunnel(tunnel));
      }
      if (sub === 'configurations' && method === 'PUT') {
        const ingress = body?.config?.ingress;
        if (!Array.isArray(ingress) || ingress.length === 0)
          return err(400, 1056, 'Invalid tunnel configuration');
        const last = ingress[ingress.length - 1]!;
        const catchAlls = ingress.filter((rule) => !rule.hostname);
        if (last.hostname || catchAlls.length !== 1) {
          return err(400, 1056, 'The last ingress rule must match all URLs (no hostname)');
        }
        tunnel.config = { ingress };
        return ok({ tunnel_id: tunnel.id, version: 1, config: tunnel.config, source: 'cloudflare' });
      }
      if (sub === 'token' && method === 'GET') return ok(tokenOf(tunnel.id));
      if (sub === 'connections' && method === 'DELETE') {
        if (!reconnecting.has(tunnel.id)) tunnel.connections = [];
        tunnel.status = tunnel.connections.length > 0 ? 'healthy' : 'inactive';
        return ok(null);
      }
      return err(404, 7003, 'Could not route to the requested resource');
    }
    // /zones/{zone}/dns_records[/{id}]
    if (parts[0] === 'zones') {
      if (parts[1] !== zoneId || parts[2] !== 'dns_records')
        return err(403, 9109, 'Unauthorized to access requested resource');
      const id = parts[3];
      if (!id && method === 'GET') {
        if (hideDnsList > 0) {
          hideDnsList -= 1;
          return ok([]);
        }
        return ok([...dns.values()].filter((r) => query.name === undefined || r.name === query.name));
      }
      if (!id && method === 'POST') {
        const clash = [...dns.values()].some(
          (r) => r.name === body?.name && ['A', 'AAAA', 'CNAME'].includes(r.type),
        );
        if (clash) return err(400, 81053, 'An A, AAAA, or CNAME record with that host already exists.');
        const record: FakeDnsRecord = {
          id: randomBytes(16).toString('hex'),
          zone_id: zoneId,
          name: body?.name ?? '',
          type: body?.type ?? '',
          content: body?.content ?? '',
          proxied: body?.proxied === true,
          ttl: body?.ttl ?? 1,
          comment: body?.comment,
        };
        dns.set(record.id, record);
        return ok(record);
      }
      const record = id ? dns.get(id) : undefined;
      if (!record) return err(404, 81044, 'Record does not exist.');
      if (method === 'PATCH') {
        Object.assign(record, body);
        return ok(record);
      }
      if (method === 'DELETE') {
        dns.delete(record.id);
        return ok({ id: record.id });
      }
    }
    return err(404, 7003, 'Could not route to the requested resource');
  }

  const server = createServer((req: IncomingMessage, res: ServerResponse) => {
    void (async () => {
      const url = new URL(req.url ?? '/', 'http://fake');
      const query = Object.fromEntries(url.searchParams);
      const body = (await readBody(req)) as FakeBody | undefined;
      const path = url.pathname.replace(/^\/client\/v4/, '');
      let answer;
      if (req.headers.authorization !== `Bearer ${apiToken}`) {
        answer = { status: 400, body: envelope(null, [{ code: 6003, message: 'Invalid request headers' }]) };
      } else {
        answer = handle(req.method ?? 'GET', path.split('/').filter(Boolean), query, body);
      }
      requests.push({
        method: req.method ?? 'GET',
        path,
        query,
        body,
        status: answer.status,
        errorCodes: answer.body.errors.map((e) => e.code),
      });
      res.writeHead(answer.status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(answer.body));
    })();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url,
    apiUrl: `${url}/client/v4`,
    accountId,
    zoneId,
    apiToken,
    tunnels,
    dns,
    requests,
    tokenOf,
    connect(tunnelId, options = {}) {
      const tunnel = tunnels.get(tunnelId)!;
      tunnel.connections.push({
        id: randomUUID(),
        colo_name: 'ams01',
        opened_at: new Date().toISOString(),
        client_id: randomUUID(),
      });
      tunnel.status = 'healthy';
      if (options.reconnects) reconnecting.add(tunnelId);
    },
    hideNextTunnelList() {
      hideTunnelList += 1;
    },
    hideNextDnsList() {
      hideDnsList += 1;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
