import type {
  ConsoleRouteNoticePublisher,
  CredentialNoticePublisher,
  Logger,
  SecretBox,
} from '@svc/service-kit';
import type { Pool } from 'pg';
import type { ApiKeyCache } from './auth/api-key-cache';
import type { LoginThrottle } from './auth/login-throttle';
import type { SigningKeyRing } from './auth/signing-keys';
import type { AuditRepository } from './data/audit.repository';
import type { TunnelProviders } from './data/tunnel-providers/tunnel-provider';
import type { Db } from './db';

/** Everything a hub use-case may need; built once in app wiring, passed explicitly. */
export interface HubDeps {
  db: Db;
  /**
   * The pool Prisma runs on, for the few hot statements sent as named prepared statements outside Prisma
   * (decision 97).
   */
  pool: Pool;
  keys: SigningKeyRing;
  /** Seals secrets the hub must be able to use again (relay tokens, repo and provider credentials). */
  box: SecretBox;
  audit: AuditRepository;
  /** The hub's API-key check with its short per-replica cache; invalidate a key when it changes. */
  apiKeys: ApiKeyCache;
  /** Announces revocations and membership changes to the other services (decision 47). */
  notices: CredentialNoticePublisher;
  /** Wakes the console router of a host whose route table changed (decision 73). */
  routeNotices: ConsoleRouteNoticePublisher;
  /** Per-client limits on failed sign-ins (decision 47). */
  loginThrottle: LoginThrottle;
  logger: Logger;
  /** Tunnel providers of runtime environments (local always, Cloudflare when configured). */
  tunnels: TunnelProviders;
  now: () => Date;
  settings: {
    publicUrl: string;
    workflowPublicUrl: string;
    participantTokenTtlSeconds: number;
    agentTokenTtlSeconds: number;
    /** Providers whose hosted authorization the hub owns (runtime credential source `hub_managed`). */
    hubManagedProviders: readonly string[];
    /** Break-glass/development: runtime credentials may fall back to server-local provider auth. */
    serverLocalProviderAuth: boolean;
    /** Lifetime of a runtime credential in seconds (at most 900). */
    runtimeCredentialTtlSeconds: number;
  };
}
