import type { Logger, SecretBox } from '@svc/service-kit';
import type { SigningKeyRing } from './auth/signing-keys';
import type { AuditRepository } from './data/audit.repository';
import type { Db } from './db';

/** Everything a hub use-case may need; built once in app wiring, passed explicitly. */
export interface HubDeps {
  db: Db;
  keys: SigningKeyRing;
  /** Seals secrets the hub must be able to use again (relay tokens, repo and provider credentials). */
  box: SecretBox;
  audit: AuditRepository;
  logger: Logger;
  now: () => Date;
  settings: {
    publicUrl: string;
    workflowPublicUrl: string;
    participantTokenTtlSeconds: number;
    agentTokenTtlSeconds: number;
  };
}
