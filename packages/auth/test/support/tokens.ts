import { createTokenIssuer } from '../../src/jwt/issuer';
import { generateSigningKey } from '../../src/jwt/keys';

/** The issuer and the fixed clock of the token tests. */
export const ISSUER = 'https://hub.test';
export const NOW_MS = 1_750_000_000_000;
export const NOW_S = NOW_MS / 1000;

/** Two signing keys of the issuer (each test file gets its own pair). */
export const keyA = generateSigningKey();
export const keyB = generateSigningKey();

/** The JSON of a token's header (0) or payload (1). */
export function decodeSegment(token: string, index: number): Record<string, unknown> {
  return JSON.parse(Buffer.from(token.split('.')[index] ?? '', 'base64url').toString('utf8')) as Record<
    string,
    unknown
  >;
}

/** An issuer holding both keys, signing with `activeKid`. */
export function issuerWith(activeKid: string, now: () => number = () => NOW_MS) {
  return createTokenIssuer({
    issuer: ISSUER,
    keys: [keyA, keyB].map(({ kid, privateKeyPem }) => ({ kid, privateKeyPem })),
    activeKid,
    now,
  });
}
