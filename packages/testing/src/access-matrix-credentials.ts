import { createHash, generateKeyPairSync, randomBytes, randomUUID, sign } from 'node:crypto';

/**
 * The credential kinds the unauthorized matrix presents, how each travels, and forged ones: credentials of the
 * right shape that no service issued, so every operation is shown to refuse each kind it cannot verify.
 */

/** Actor kinds of `x-svc-actors` other than `anonymous` (the same list as `ACTOR_KINDS` of `@svc/auth`). */
export const MATRIX_ACTOR_KINDS = ['participant', 'api_key', 'agent', 'service', 'relay_token'] as const;
export type MatrixActorKind = (typeof MATRIX_ACTOR_KINDS)[number];

/**
 * Bearer tokens the hub issues that are no actor kind of their own: a console ticket (audience `console`) and an
 * agent's runtime credential (audience `runtime`). A service that does not read them must refuse them.
 */
export const MATRIX_TOKEN_KINDS = ['console_ticket', 'runtime_credential'] as const;
export type MatrixTokenKind = (typeof MATRIX_TOKEN_KINDS)[number];

export const MATRIX_CREDENTIAL_KINDS = [...MATRIX_ACTOR_KINDS, ...MATRIX_TOKEN_KINDS] as const;
export type MatrixCredentialKind = (typeof MATRIX_CREDENTIAL_KINDS)[number];

export const CREDENTIAL_LABELS: Record<MatrixCredentialKind, string> = {
  participant: 'a participant token',
  api_key: 'an API key',
  agent: 'an agent token',
  service: 'a service token',
  relay_token: 'a relay token',
  console_ticket: 'a console ticket',
  runtime_credential: 'a runtime credential',
};

/** The request header that carries each credential kind. */
export const CREDENTIAL_HEADERS: Record<
  MatrixCredentialKind,
  (credential: string) => Record<string, string>
> = {
  participant: (c) => ({ authorization: `Bearer ${c}` }),
  agent: (c) => ({ authorization: `Bearer ${c}` }),
  console_ticket: (c) => ({ authorization: `Bearer ${c}` }),
  runtime_credential: (c) => ({ authorization: `Bearer ${c}` }),
  api_key: (c) => ({ 'x-api-key': c }),
  service: (c) => ({ 'x-svc-service-token': c }),
  relay_token: (c) => ({ 'x-svc-relay-token': c }),
};

const AUDIENCE_OF: Partial<Record<MatrixCredentialKind, string>> = {
  participant: 'participant',
  agent: 'agent',
  console_ticket: 'console',
  runtime_credential: 'runtime',
};

const ALPHANUMERIC = 'abcdefghijklmnopqrstuvwxyz0123456789';

function lowerAlphanumeric(length: number): string {
  return [...randomBytes(length)].map((b) => ALPHANUMERIC[b % ALPHANUMERIC.length]).join('');
}

let forgingKey: ReturnType<typeof generateKeyPairSync> | undefined;

/** Signs `payload` as an ES256 JWS with a key pair made here (so no service knows it). */
export function signForeignJwt(
  payload: Record<string, unknown>,
  header: Record<string, unknown> = {},
): string {
  forgingKey ??= generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const kid = createHash('sha256').update(randomBytes(16)).digest('base64url');
  const head = Buffer.from(JSON.stringify({ alg: 'ES256', typ: 'JWT', kid, ...header })).toString(
    'base64url',
  );
  const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
  const signature = sign('sha256', Buffer.from(`${head}.${body}`), {
    key: forgingKey.privateKey,
    dsaEncoding: 'ieee-p1363',
  }).toString('base64url');
  return `${head}.${body}.${signature}`;
}

/**
 * A credential of `kind` that no service issued: a JWT of the kind's audience signed by an unknown key, or an
 * opaque token in the kind's format with a random secret. Every service must answer it 401 `credential_invalid`.
 */
export function forgedCredential(kind: MatrixCredentialKind, workspaceId = 'ws_forged'): string {
  const audience = AUDIENCE_OF[kind];
  if (audience !== undefined) {
    const iat = Math.floor(Date.now() / 1000);
    return signForeignJwt({
      iss: 'http://forged.invalid',
      sub: kind === 'agent' ? 'agt_forged' : 'prt_forged',
      aud: audience,
      iat,
      exp: iat + 600,
      jti: randomUUID(),
      workspace_id: workspaceId,
      ws: workspaceId,
    });
  }
  const secret = randomBytes(32).toString('base64url');
  switch (kind) {
    case 'api_key':
      return `svc_${lowerAlphanumeric(12)}_${secret}`;
    case 'service':
      return `svs_${secret}`;
    default:
      return `rly_${secret}`;
  }
}
