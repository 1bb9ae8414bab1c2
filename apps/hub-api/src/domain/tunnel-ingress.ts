import { createHash } from 'node:crypto';
import { AppError } from '@svc/service-kit';

/** One rule of a tunnel's ingress document, as the provider stores it. */
export interface TunnelIngressRule {
  hostname?: string;
  service: string;
}

/** The catch-all that ends every ingress document (spec, "Tunnel ingress shape"). */
export const CATCH_ALL_SERVICE = 'http_status:404';

export interface IngressInput {
  consoleHostname: string;
  relayHostname: string;
  consoleListenPort: number;
  relayListenPort: number;
}

/**
 * The ingress of the spec: console hostname → the console router, relay hostname → the relay, both on
 * loopback, then the final catch-all. Checked before it is returned, so a broken document never leaves the hub.
 */
export function buildIngress(input: IngressInput): TunnelIngressRule[] {
  const rules: TunnelIngressRule[] = [
    { hostname: input.consoleHostname, service: `http://127.0.0.1:${input.consoleListenPort}` },
    { hostname: input.relayHostname, service: `http://127.0.0.1:${input.relayListenPort}` },
    { service: CATCH_ALL_SERVICE },
  ];
  return validateIngress(rules);
}

/**
 * What cloudflared refuses, refused here first: exactly one catch-all (a rule without a hostname), and it is
 * the last rule; every other rule names a distinct hostname and a service.
 */
export function validateIngress(rules: TunnelIngressRule[]): TunnelIngressRule[] {
  const problems: string[] = [];
  const catchAlls = rules.filter((rule) => !rule.hostname);
  if (catchAlls.length !== 1) problems.push(`expected exactly one catch-all rule, found ${catchAlls.length}`);
  const last = rules[rules.length - 1];
  if (!last || last.hostname) problems.push('the last rule must be the catch-all');
  const seen = new Set<string>();
  for (const rule of rules) {
    if (!rule.service) problems.push('every rule needs a service');
    if (!rule.hostname) continue;
    const name = rule.hostname.toLowerCase();
    if (seen.has(name)) problems.push(`hostname ${name} appears twice`);
    seen.add(name);
  }
  if (problems.length > 0) {
    throw new AppError({
      status: 500,
      code: 'tunnel_ingress_invalid',
      message: `tunnel ingress refused locally: ${problems.join('; ')}`,
    });
  }
  return rules;
}

const MAX_LABEL = 63;

/**
 * The public hostname of one service of an environment: one DNS label under the zone
 * (`<workspace>-<environment>-console.<zone>`), so a zone-wide certificate covers it. A label that would be
 * too long keeps as much of the workspace slug as fits, followed by a short hash of the workspace id.
 */
export function tunnelHostname(input: {
  zone: string;
  workspaceId: string;
  workspaceSlug: string;
  environmentName: string;
  service: 'console' | 'relay';
}): string {
  const suffix = `-${input.environmentName}-${input.service}`;
  const room = MAX_LABEL - suffix.length;
  let slug = input.workspaceSlug;
  if (slug.length > room) {
    const hash = createHash('sha256').update(input.workspaceId).digest('hex').slice(0, 6);
    slug = `${slug.slice(0, Math.max(1, room - 7)).replace(/-+$/, '')}-${hash}`;
  }
  return `${slug}${suffix}.${input.zone}`.toLowerCase();
}

/** The provider-side name of an environment's tunnel; a tunnel with this name is ours. */
export function tunnelName(workspaceId: string, environmentName: string): string {
  return `svc-${workspaceId}-${environmentName}`;
}
