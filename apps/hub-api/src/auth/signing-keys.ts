import { createJwksDocument, createTokenIssuer, createTokenVerifier, generateSigningKey } from '@svc/auth';
import type { JwksDocument, PublicJwk, TokenIssuer, TokenVerifier } from '@svc/auth';
import type { Logger, SecretBox } from '@svc/service-kit';
import type { Db } from '../db';

const ENSURE_LOCK_KEY = 7_202_611;

export interface SigningKeyRingOptions {
  db: Db;
  box: SecretBox;
  issuer: string;
  logger: Logger;
  /** How often every replica reloads the keys, so a rotation made anywhere reaches all of them. */
  refreshIntervalMs?: number;
  now?: () => Date;
}

/**
 * The hub's ES256 signing keys, kept in Postgres (private parts sealed with the hub's encryption key). The
 * newest activated key signs; every key not yet retired is published in the JWKS, so tokens signed before
 * a rotation keep verifying until they expire.
 */
export class SigningKeyRing {
  private issuerInstance: TokenIssuer | undefined;
  private jwksDocument: JwksDocument = { keys: [] };
  private timer: NodeJS.Timeout | undefined;
  private lastForcedRefresh = 0;
  readonly verifier: TokenVerifier;

  constructor(private readonly options: SigningKeyRingOptions) {
    this.verifier = createTokenVerifier({
      issuer: options.issuer,
      getJwks: async ({ forceRefresh }) => {
        const now = Date.now();
        if (forceRefresh && now - this.lastForcedRefresh > 5_000) {
          this.lastForcedRefresh = now;
          await this.refresh();
        }
        return this.jwksDocument;
      },
    });
  }

  private now(): Date {
    return this.options.now?.() ?? new Date();
  }

  /** Creates the first key when there is none (safe when several replicas start at once), then loads. */
  async start(): Promise<void> {
    await this.options.db.$transaction(async (tx) => {
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(${ENSURE_LOCK_KEY})`;
      const active = await tx.signingKey.count({
        where: { OR: [{ retiresAt: null }, { retiresAt: { gt: this.now() } }] },
      });
      if (active === 0) await this.insertNewKey(tx);
    });
    await this.refresh();
    const interval = this.options.refreshIntervalMs ?? 60_000;
    if (interval > 0) {
      this.timer = setInterval(() => {
        this.refresh().catch((error: unknown) =>
          this.options.logger.warn({ err: error }, 'signing key refresh failed'),
        );
      }, interval);
      this.timer.unref();
    }
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  private async insertNewKey(tx: Pick<Db, 'signingKey'>): Promise<string> {
    const key = generateSigningKey();
    await tx.signingKey.create({
      data: {
        kid: key.kid,
        algorithm: 'ES256',
        publicJwk: key.publicJwk as unknown as object,
        privateKeyCiphertext: this.options.box.seal(key.privateKeyPem, key.kid),
        activatedAt: this.now(),
      },
    });
    return key.kid;
  }

  async refresh(): Promise<void> {
    const now = this.now();
    const rows = await this.options.db.signingKey.findMany({
      where: { OR: [{ retiresAt: null }, { retiresAt: { gt: now } }] },
      orderBy: [{ activatedAt: 'desc' }, { kid: 'asc' }],
    });
    const active = rows.find((row) => row.activatedAt <= now);
    if (!active) throw new Error('no active signing key');
    this.jwksDocument = createJwksDocument(rows.map((row) => row.publicJwk as unknown as PublicJwk));
    this.issuerInstance = createTokenIssuer({
      issuer: this.options.issuer,
      keys: rows.map((row) => ({
        kid: row.kid,
        privateKeyPem: this.unseal(row.privateKeyCiphertext, row.kid),
      })),
      activeKid: active.kid,
      now: () => this.now().getTime(),
    });
  }

  /** A stored private key, opened with `HUB_ENCRYPTION_KEYS`; a failure says which setting to check. */
  private unseal(sealed: string, kid: string): string {
    try {
      return this.options.box.open(sealed, kid);
    } catch (error) {
      throw new Error(
        `signing key ${kid} in the database cannot be unsealed with HUB_ENCRYPTION_KEYS (${(error as Error).message}); ` +
          'start the hub with the encryption keys that sealed it',
        { cause: error },
      );
    }
  }

  /**
   * Makes a new key the signer. Older keys stay published for `retireAfterSeconds` (at least the longest
   * token lifetime), then disappear from the JWKS.
   */
  async rotate(retireAfterSeconds: number): Promise<string> {
    const retiresAt = new Date(this.now().getTime() + retireAfterSeconds * 1000);
    const kid = await this.options.db.$transaction(async (tx) => {
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(${ENSURE_LOCK_KEY})`;
      await tx.signingKey.updateMany({ where: { retiresAt: null }, data: { retiresAt } });
      return this.insertNewKey(tx);
    });
    await this.refresh();
    return kid;
  }

  get issuer(): TokenIssuer {
    if (!this.issuerInstance) throw new Error('signing keys are not loaded; call start() first');
    return this.issuerInstance;
  }

  jwks(): JwksDocument {
    return this.jwksDocument;
  }
}
