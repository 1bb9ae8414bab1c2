import { AppError } from '@svc/service-kit';
import { createCloudflareTunnelProvider } from './cloudflare';
import type { CloudflareSettings } from './cloudflare';
import { createLocalTunnelProvider } from './local';
import type { TunnelProvider, TunnelProviderName, TunnelProviders } from './tunnel-provider';

export interface TunnelProviderSettings {
  defaultProvider: TunnelProviderName;
  /** Absent when the hub has no Cloudflare credentials. */
  cloudflare?: CloudflareSettings;
  now?: () => Date;
}

/** The hub's tunnel providers: `local` always, `cloudflare` when configured. */
export function createTunnelProviders(settings: TunnelProviderSettings): TunnelProviders {
  const local = createLocalTunnelProvider(settings.now);
  const cloudflare = settings.cloudflare
    ? createCloudflareTunnelProvider({ now: settings.now, ...settings.cloudflare })
    : null;
  return {
    defaultProvider: settings.defaultProvider,
    get(name: TunnelProviderName): TunnelProvider {
      if (name === 'local') return local;
      if (cloudflare) return cloudflare;
      throw new AppError({
        status: 503,
        code: 'tunnel_provider_not_configured',
        detail:
          'This hub has no Cloudflare credentials (HUB_CLOUDFLARE_ACCOUNT_ID, HUB_CLOUDFLARE_ZONE_ID, HUB_CLOUDFLARE_ZONE_NAME, HUB_CLOUDFLARE_API_TOKEN_SEALED).',
        extra: { provider: name },
      });
    },
  };
}
