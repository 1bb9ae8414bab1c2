import { AppError } from '@svc/service-kit';
import { buildIngress, tunnelHostname, tunnelName } from '../../domain/tunnel-ingress';
import type {
  ProvisionTunnelInput,
  TunnelDnsRecord,
  TunnelLiveState,
  TunnelProvider,
} from './tunnel-provider';
import { tunnelProviderError, tunnelProviderUnavailable } from './tunnel-provider';

/** Associated data the Cloudflare API token is sealed with in the hub's configuration. */
export const CLOUDFLARE_TOKEN_AAD = 'hub-config:cloudflare-api-token';

export interface CloudflareSettings {
  /** `https://api.cloudflare.com/client/v4` in production; a local fake in tests. */
  apiUrl: string;
  accountId: string;
  zoneId: string;
  /** The zone's domain; public hostnames are one label under it. */
  zoneName: string;
  /** The API token in clear (opened from its sealed form by the wiring); sent only as a bearer header. */
  apiToken: string;
  fetch?: typeof fetch;
  timeoutMs?: number;
  now?: () => Date;
}

/** Cloudflare's error codes the provider acts on. */
export const CLOUDFLARE_CODES = {
  tunnelNameTaken: 1013,
  tunnelHasActiveConnections: 1022,
  dnsRecordExists: 81053,
  dnsRecordMissing: 81044,
} as const;

interface CloudflareError {
  code: number;
  message: string;
}

/** Every answer of the v4 API: `{ success, errors, messages, result }`. */
interface Envelope<T> {
  success: boolean;
  errors: CloudflareError[];
  messages: unknown[];
  result: T;
}

interface CloudflareTunnel {
  id: string;
  name: string;
  status?: string;
  deleted_at?: string | null;
  connections?: Array<{ id: string; colo_name?: string; opened_at?: string }>;
}

interface CloudflareDnsRecord {
  id: string;
  name: string;
  type: string;
  content: string;
  proxied?: boolean;
}

interface Answer<T> {
  status: number;
  ok: boolean;
  envelope: Envelope<T> | null;
}

const LIVE_STATUSES = new Set(['inactive', 'degraded', 'healthy', 'down']);

const hasCode = (answer: Answer<unknown>, code: number) =>
  answer.envelope?.errors?.some((error) => error.code === code) ?? false;

/**
 * Remote-managed Cloudflare tunnels through the v4 HTTP API: look the tunnel up by its name before creating
 * it, put the whole ingress document, keep proxied CNAMEs to `<tunnel-id>.cfargotunnel.com`, fetch the
 * connector token; on delete clean up connections, delete the tunnel, read it back, and delete our records.
 */
export function createCloudflareTunnelProvider(settings: CloudflareSettings): TunnelProvider {
  const doFetch = settings.fetch ?? fetch;
  const base = settings.apiUrl.replace(/\/+$/, '');
  const account = `/accounts/${encodeURIComponent(settings.accountId)}`;
  const zone = `/zones/${encodeURIComponent(settings.zoneId)}`;
  const now = settings.now ?? (() => new Date());

  async function call<T>(
    operation: string,
    method: string,
    path: string,
    options: { query?: Record<string, string>; body?: unknown } = {},
  ): Promise<Answer<T>> {
    const url = new URL(`${base}${path}`);
    for (const [key, value] of Object.entries(options.query ?? {})) url.searchParams.set(key, value);
    let res: Response;
    try {
      res = await doFetch(url, {
        method,
        headers: {
          authorization: `Bearer ${settings.apiToken}`,
          accept: 'application/json',
          ...(options.body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: options.body === undefined ? undefined : JSON.stringify(options.body),
        signal: AbortSignal.timeout(settings.timeoutMs ?? 15_000),
      });
    } catch (error) {
      throw tunnelProviderUnavailable('cloudflare', operation, error);
    }
    let envelope: Envelope<T> | null;
    try {
      envelope = (await res.json()) as Envelope<T>;
    } catch {
      envelope = null;
    }
    return { status: res.status, ok: res.ok && envelope?.success === true, envelope };
  }

  function fail(operation: string, answer: Answer<unknown>): never {
    const errors = (answer.envelope?.errors ?? []).map((error) => ({
      code: Number(error.code),
      message: String(error.message).slice(0, 300),
    }));
    throw tunnelProviderError('cloudflare', operation, answer.status, errors);
  }

  async function ok<T>(operation: string, answer: Promise<Answer<T>>): Promise<T> {
    const done = await answer;
    if (!done.ok || !done.envelope) fail(operation, done);
    return done.envelope.result;
  }

  /** The tunnel, or null when it does not exist or has been deleted. */
  async function readTunnel(tunnelId: string): Promise<CloudflareTunnel | null> {
    const answer = await call<CloudflareTunnel>(
      'read the tunnel',
      'GET',
      `${account}/cfd_tunnel/${tunnelId}`,
    );
    if (answer.status === 404) return null;
    if (!answer.ok || !answer.envelope) fail('read the tunnel', answer);
    const tunnel = answer.envelope.result;
    return tunnel.deleted_at ? null : tunnel;
  }

  async function findByName(name: string): Promise<CloudflareTunnel | null> {
    const list = await ok(
      'list tunnels',
      call<CloudflareTunnel[]>('list tunnels', 'GET', `${account}/cfd_tunnel`, {
        query: { name, is_deleted: 'false' },
      }),
    );
    return (list ?? []).find((tunnel) => tunnel.name === name && !tunnel.deleted_at) ?? null;
  }

  async function findOrCreate(name: string, knownId: string | null): Promise<CloudflareTunnel> {
    if (knownId) {
      const known = await readTunnel(knownId);
      if (known && known.name === name) return known;
    }
    const existing = await findByName(name);
    if (existing) return existing;
    const created = await call<CloudflareTunnel>('create the tunnel', 'POST', `${account}/cfd_tunnel`, {
      body: { name, config_src: 'cloudflare' },
    });
    if (created.ok && created.envelope) return created.envelope.result;
    if (hasCode(created, CLOUDFLARE_CODES.tunnelNameTaken)) {
      // Another provisioning created it meanwhile: the name is ours, so the tunnel is too.
      const raced = await findByName(name);
      if (raced) return raced;
    }
    fail('create the tunnel', created);
  }

  async function recordsNamed(name: string): Promise<CloudflareDnsRecord[]> {
    return (
      (await ok(
        'list DNS records',
        call<CloudflareDnsRecord[]>('list DNS records', 'GET', `${zone}/dns_records`, { query: { name } }),
      )) ?? []
    ).filter((record) => record.name.toLowerCase() === name.toLowerCase());
  }

  const asStored = (record: CloudflareDnsRecord): TunnelDnsRecord => ({
    id: record.id,
    name: record.name,
    type: record.type,
    content: record.content,
    proxied: record.proxied === true,
  });

  /** Compares what exists at `name` with our CNAME: ours is kept (proxied if it was not), anything else is a conflict. */
  function judge(name: string, target: string, records: CloudflareDnsRecord[]): CloudflareDnsRecord | null {
    if (records.length === 0) return null;
    const ours = records.find(
      (record) => record.type === 'CNAME' && record.content.toLowerCase() === target.toLowerCase(),
    );
    if (ours && records.length === 1) return ours;
    const other = records.find((record) => record !== ours) ?? records[0]!;
    throw new AppError({
      status: 409,
      code: 'tunnel_dns_record_conflict',
      detail: `A DNS record for ${name} already exists and does not point at this environment's tunnel; it was left unchanged.`,
      extra: {
        provider: 'cloudflare',
        hostname: name,
        existing: { type: other.type, content: other.content, proxied: other.proxied === true },
      },
    });
  }

  async function ensureCname(name: string, target: string): Promise<TunnelDnsRecord> {
    let found = judge(name, target, await recordsNamed(name));
    if (!found) {
      const created = await call<CloudflareDnsRecord>('create a DNS record', 'POST', `${zone}/dns_records`, {
        body: { type: 'CNAME', name, content: target, proxied: true, ttl: 1, comment: 'svc runtime tunnel' },
      });
      if (created.ok && created.envelope) return asStored(created.envelope.result);
      if (!hasCode(created, CLOUDFLARE_CODES.dnsRecordExists)) fail('create a DNS record', created);
      // Created meanwhile by someone else: compare it like any existing record.
      found = judge(name, target, await recordsNamed(name));
      if (!found) fail('create a DNS record', created);
    }
    if (found.proxied !== true) {
      found = await ok(
        'proxy a DNS record',
        call<CloudflareDnsRecord>('proxy a DNS record', 'PATCH', `${zone}/dns_records/${found.id}`, {
          body: { proxied: true },
        }),
      );
    }
    return asStored(found);
  }

  function liveOf(tunnel: CloudflareTunnel | null): TunnelLiveState {
    const status = tunnel?.status && LIVE_STATUSES.has(tunnel.status) ? tunnel.status : 'inactive';
    return {
      status: tunnel ? (status as TunnelLiveState['status']) : 'deleted',
      connections: (tunnel?.connections ?? []).map((connection) => ({
        id: String(connection.id),
        colo_name: connection.colo_name ?? null,
        opened_at: connection.opened_at ?? null,
      })),
      checked_at: now().toISOString(),
    };
  }

  return {
    name: 'cloudflare',
    async provision(input: ProvisionTunnelInput) {
      const name = tunnelName(input.workspaceId, input.environmentName);
      const host = (service: 'console' | 'relay') =>
        tunnelHostname({
          zone: settings.zoneName,
          workspaceId: input.workspaceId,
          workspaceSlug: input.workspaceSlug,
          environmentName: input.environmentName,
          service,
        });
      const consoleHostname = host('console');
      const relayHostname = host('relay');
      const ingress = buildIngress({
        consoleHostname,
        relayHostname,
        consoleListenPort: input.host.consoleListenPort,
        relayListenPort: input.host.relayListenPort,
      });

      const tunnel = await findOrCreate(name, input.knownTunnelId);
      await ok(
        'put the ingress configuration',
        call('put the ingress configuration', 'PUT', `${account}/cfd_tunnel/${tunnel.id}/configurations`, {
          body: { config: { ingress } },
        }),
      );
      const target = `${tunnel.id}.cfargotunnel.com`;
      const dnsRecords = [
        await ensureCname(consoleHostname, target),
        await ensureCname(relayHostname, target),
      ];
      const token = await ok(
        'fetch the connector token',
        call<string>('fetch the connector token', 'GET', `${account}/cfd_tunnel/${tunnel.id}/token`),
      );
      if (typeof token !== 'string' || token.length === 0) {
        throw tunnelProviderError('cloudflare', 'fetch the connector token', 200, []);
      }
      return {
        tunnelId: tunnel.id,
        tunnelName: name,
        consoleHostname,
        relayHostname,
        consolePublicBaseUrl: `https://${consoleHostname}`,
        relayPublicBaseUrl: `https://${relayHostname}`,
        dnsRecords,
        ingress,
        connectorToken: token,
        live: liveOf(await readTunnel(tunnel.id)),
      };
    },

    async delete(input) {
      const name = tunnelName(input.workspaceId, input.environmentName);
      const tunnel = input.tunnelId ? await readTunnel(input.tunnelId) : await findByName(name);
      const tunnelId = tunnel?.id ?? input.tunnelId;
      // Ours: the records stored, and any record at our hostnames that points at our tunnel (a provisioning
      // that failed half-way may have created one it never stored). Deleting a tunnel leaves its DNS records.
      const ours = new Map(input.dnsRecords.map((record) => [record.id, record]));
      if (tunnelId) {
        const target = `${tunnelId}.cfargotunnel.com`;
        for (const service of ['console', 'relay'] as const) {
          const hostname = tunnelHostname({
            zone: settings.zoneName,
            workspaceId: input.workspaceId,
            workspaceSlug: input.workspaceSlug,
            environmentName: input.environmentName,
            service,
          });
          for (const record of await recordsNamed(hostname)) {
            if (record.type === 'CNAME' && record.content.toLowerCase() === target) {
              ours.set(record.id, asStored(record));
            }
          }
        }
      }
      for (const record of ours.values()) {
        const answer = await call('delete a DNS record', 'DELETE', `${zone}/dns_records/${record.id}`);
        if (!answer.ok && answer.status !== 404 && !hasCode(answer, CLOUDFLARE_CODES.dnsRecordMissing)) {
          fail('delete a DNS record', answer);
        }
      }
      if (!tunnel) return;
      const tunnelPath = `${account}/cfd_tunnel/${tunnel.id}`;
      // A tunnel with connections cannot be deleted: clean them up first, cascade if some came back.
      const cleaned = await call('clean up connections', 'DELETE', `${tunnelPath}/connections`);
      if (!cleaned.ok && cleaned.status !== 404) fail('clean up connections', cleaned);
      let deleted = await call('delete the tunnel', 'DELETE', tunnelPath);
      if (!deleted.ok && hasCode(deleted, CLOUDFLARE_CODES.tunnelHasActiveConnections)) {
        deleted = await call('delete the tunnel', 'DELETE', tunnelPath, { query: { cascade: 'true' } });
      }
      if (!deleted.ok && deleted.status !== 404) fail('delete the tunnel', deleted);
      // Deletes have been reported successful while the tunnel remained: believe a read, not the answer.
      if (await readTunnel(tunnel.id)) {
        throw new AppError({
          status: 502,
          code: 'tunnel_delete_unconfirmed',
          detail: 'Cloudflare accepted the deletion but the tunnel still exists; retry the DELETE.',
          extra: { provider: 'cloudflare', tunnel_id: tunnel.id },
        });
      }
    },

    async live({ tunnelId }) {
      return liveOf(tunnelId ? await readTunnel(tunnelId) : null);
    },
  };
}
