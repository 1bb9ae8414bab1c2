/** The fields of a runtime environment that decide a host's public URLs. */
export interface EnvironmentUrls {
  tunnelState: string;
  consolePublicBaseUrl: string | null;
  relayPublicBaseUrl: string | null;
}

/**
 * A host's public console and relay URLs: those of its environment's tunnel while it is active, else the
 * host's own. Runtime config and the Networks view both read them here, so no client builds a hostname.
 */
export function publicUrlsOf(
  host: { consolePublicBaseUrl: string; relayPublicUrl: string | null },
  environment: EnvironmentUrls | null | undefined,
): { console: string; relay: string | null } {
  if (environment?.tunnelState === 'active' && environment.consolePublicBaseUrl) {
    return {
      console: environment.consolePublicBaseUrl,
      relay: environment.relayPublicBaseUrl ?? host.relayPublicUrl,
    };
  }
  return { console: host.consolePublicBaseUrl, relay: host.relayPublicUrl };
}
