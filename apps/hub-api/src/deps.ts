import type { Logger } from '@svc/service-kit';
import type { SigningKeyRing } from './auth/signing-keys';
import type { AuditRepository } from './data/audit.repository';
import type { Db } from './db';

/** Everything a hub use-case may need; built once in app wiring, passed explicitly. */
export interface HubDeps {
  db: Db;
  keys: SigningKeyRing;
  audit: AuditRepository;
  logger: Logger;
  now: () => Date;
  settings: {
    publicUrl: string;
    workflowPublicUrl: string;
    participantTokenTtlSeconds: number;
  };
}
