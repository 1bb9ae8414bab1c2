import { createHmac, createPublicKey, generateKeyPairSync, sign as cryptoSign } from 'node:crypto';
import { sign as jwtSign } from 'jsonwebtoken';
import { decodeSegment, ISSUER, issuerWith, keyA, keyB, NOW_MS, NOW_S } from '../../test/support/tokens';
import { JwksUnavailableError, TokenError } from './errors';
import type { TokenErrorReason } from './errors';
import { createTokenIssuer } from './issuer';
import { createJwksDocument, generateSigningKey } from './keys';
import type { GetJwks, JwksDocument } from './keys';
import { createStaticJwks } from './remote-jwks';
import { createTokenVerifier } from './verifier';
import type { TokenVerifier } from './verifier';

const b64json = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');

/** ES256 signed by hand with node:crypto, independent of jsonwebtoken. */
function signEs256(header: Record<string, unknown>, payload: Record<string, unknown>, pem: string): string {
  const input = `${b64json(header)}.${b64json(payload)}`;
  const signature = cryptoSign('sha256', Buffer.from(input), { key: pem, dsaEncoding: 'ieee-p1363' });
  return `${input}.${signature.toString('base64url')}`;
}

async function rejection(promise: Promise<unknown>): Promise<TokenError> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof TokenError) {
      return error;
    }
    throw error;
  }
  throw new Error('expected the promise to reject');
}

const outsider = generateSigningKey();

const validClaims = (overrides: Record<string, unknown> = {}): Record<string, unknown> => ({
  iss: ISSUER,
  sub: 'par_1',
  aud: 'participant',
  iat: NOW_S,
  exp: NOW_S + 600,
  jti: 'jti-1',
  ...overrides,
});

function verifierWith(
  getJwks: GetJwks,
  now: () => number = () => NOW_MS,
  clockToleranceSeconds?: number,
): TokenVerifier {
  return createTokenVerifier(
    clockToleranceSeconds === undefined
      ? { issuer: ISSUER, getJwks, now }
      : { issuer: ISSUER, getJwks, now, clockToleranceSeconds },
  );
}

const bothKeys: JwksDocument = createJwksDocument([keyA.publicJwk, keyB.publicJwk]);
describe('createTokenVerifier', () => {
  const verifier = verifierWith(createStaticJwks(bothKeys));

  it('when a freshly issued token is verified, then subject, audience, times and private claims come back', async () => {
    const issued = issuerWith(keyA.kid).issue({
      audience: 'agent',
      subject: 'agt_1',
      ttlSeconds: 900,
      claims: { workspace_id: 'ws_1', scopes: ['agents:read'] },
    });
    await expect(verifier.verify(issued.token, { audience: 'agent' })).resolves.toEqual({
      sub: 'agt_1',
      aud: 'agent',
      jti: issued.jti,
      iat: NOW_S,
      exp: NOW_S + 900,
      claims: { workspace_id: 'ws_1', scopes: ['agents:read'] },
    });
  });

  it('when a standard ES256 token signed outside jsonwebtoken is verified, then it is accepted', async () => {
    const token = signEs256({ alg: 'ES256', kid: keyB.kid }, validClaims(), keyB.privateKeyPem);
    await expect(verifier.verify(token, { audience: 'participant' })).resolves.toMatchObject({
      sub: 'par_1',
    });
  });

  it('when several audiences are accepted, then a token for any of them verifies', async () => {
    const token = issuerWith(keyA.kid).issue({
      audience: 'service',
      subject: 'workflow-api',
      ttlSeconds: 60,
    });
    await expect(verifier.verify(token.token, { audience: ['agent', 'service'] })).resolves.toMatchObject({
      aud: 'service',
    });
  });

  it('when the token has expired, then it is rejected as expired', async () => {
    const issued = issuerWith(keyA.kid, () => NOW_MS - 3_600_000).issue({
      audience: 'participant',
      subject: 'par_1',
      ttlSeconds: 600,
    });
    expect((await rejection(verifier.verify(issued.token, { audience: 'participant' }))).reason).toBe(
      'expired',
    );
  });

  it('when expiry is within the clock tolerance, then it still verifies, and past it, then it is expired', async () => {
    const issued = issuerWith(keyA.kid).issue({ audience: 'participant', subject: 'par_1', ttlSeconds: 60 });
    const at = (ms: number) => verifierWith(createStaticJwks(bothKeys), () => ms, 5);
    await expect(
      at(NOW_MS + 64_000).verify(issued.token, { audience: 'participant' }),
    ).resolves.toBeDefined();
    const late = await rejection(at(NOW_MS + 65_000).verify(issued.token, { audience: 'participant' }));
    expect(late.reason).toBe('expired');
  });

  it('when the token is issued in the future or not valid before a later time, then it is not yet valid', async () => {
    const future = issuerWith(keyA.kid, () => NOW_MS + 600_000).issue({
      audience: 'participant',
      subject: 'par_1',
      ttlSeconds: 600,
    });
    expect((await rejection(verifier.verify(future.token, { audience: 'participant' }))).reason).toBe(
      'not_yet_valid',
    );
    const nbf = signEs256(
      { alg: 'ES256', kid: keyA.kid },
      validClaims({ nbf: NOW_S + 300 }),
      keyA.privateKeyPem,
    );
    expect((await rejection(verifier.verify(nbf, { audience: 'participant' }))).reason).toBe('not_yet_valid');
  });

  it('when the token is for another audience, then it is rejected as wrong_audience', async () => {
    const issued = issuerWith(keyA.kid).issue({ audience: 'agent', subject: 'agt_1', ttlSeconds: 60 });
    expect((await rejection(verifier.verify(issued.token, { audience: 'participant' }))).reason).toBe(
      'wrong_audience',
    );
    const arrayAud = signEs256(
      { alg: 'ES256', kid: keyA.kid },
      validClaims({ aud: ['participant'] }),
      keyA.privateKeyPem,
    );
    expect((await rejection(verifier.verify(arrayAud, { audience: 'participant' }))).reason).toBe(
      'wrong_audience',
    );
  });

  it('when a console ticket is verified, then only the console audience accepts it', async () => {
    const issued = issuerWith(keyA.kid).issue({
      audience: 'console',
      subject: 'par_1',
      ttlSeconds: 60,
      claims: { ws: 'ws_1', agent: 'agt_1' },
    });
    await expect(verifier.verify(issued.token, { audience: 'console' })).resolves.toMatchObject({
      sub: 'par_1',
      aud: 'console',
      claims: { ws: 'ws_1', agent: 'agt_1' },
    });
    for (const audience of ['participant', 'agent', 'service', 'runtime'] as const) {
      expect((await rejection(verifier.verify(issued.token, { audience }))).reason).toBe('wrong_audience');
    }
  });

  it('when the token comes from another issuer, then it is rejected as wrong_issuer', async () => {
    const foreign = createTokenIssuer({ issuer: 'https://evil.test', keys: [keyA], activeKid: keyA.kid });
    const issued = foreign.issue({ audience: 'participant', subject: 'par_1', ttlSeconds: 60 });
    expect((await rejection(verifier.verify(issued.token, { audience: 'participant' }))).reason).toBe(
      'wrong_issuer',
    );
  });

  it('when the payload is tampered with, then the signature no longer matches', async () => {
    const issued = issuerWith(keyA.kid).issue({ audience: 'participant', subject: 'par_1', ttlSeconds: 60 });
    const [header, payload, signature] = issued.token.split('.');
    const forged = b64json({ ...decodeSegment(issued.token, 1), sub: 'par_admin' });
    expect(forged).not.toBe(payload);
    const tampered = `${header}.${forged}.${signature}`;
    expect((await rejection(verifier.verify(tampered, { audience: 'participant' }))).reason).toBe(
      'bad_signature',
    );
  });

  it('when the signature is tampered with, then it is rejected as bad_signature', async () => {
    const issued = issuerWith(keyA.kid).issue({ audience: 'participant', subject: 'par_1', ttlSeconds: 60 });
    const [header, payload, signature = ''] = issued.token.split('.');
    const flipped = `${signature.slice(0, 10)}${signature[10] === 'A' ? 'B' : 'A'}${signature.slice(11)}`;
    const truncated = signature.slice(0, 40);
    for (const sig of [flipped, truncated, '']) {
      const result = await rejection(
        verifier.verify(`${header}.${payload}.${sig}`, { audience: 'participant' }),
      );
      expect(result.reason).toBe('bad_signature');
    }
  });

  it('when the kid names a JWKS key but another key signed, then it is rejected as bad_signature', async () => {
    const token = signEs256({ alg: 'ES256', kid: keyA.kid }, validClaims(), outsider.privateKeyPem);
    expect((await rejection(verifier.verify(token, { audience: 'participant' }))).reason).toBe(
      'bad_signature',
    );
  });

  it('when the token is signed by a key missing from the JWKS, then one forced refresh happens and it is unknown_key', async () => {
    const getJwks = jest.fn<Promise<JwksDocument>, [{ forceRefresh: boolean }]>(() =>
      Promise.resolve(bothKeys),
    );
    const issued = createTokenIssuer({ issuer: ISSUER, keys: [outsider], activeKid: outsider.kid }).issue({
      audience: 'participant',
      subject: 'par_1',
      ttlSeconds: 60,
    });
    const result = await rejection(verifierWith(getJwks).verify(issued.token, { audience: 'participant' }));
    expect(result.reason).toBe('unknown_key');
    expect(getJwks.mock.calls).toEqual([[{ forceRefresh: false }], [{ forceRefresh: true }]]);
  });

  it('when the kid is known, then the JWKS is read without a forced refresh', async () => {
    const getJwks = jest.fn<Promise<JwksDocument>, [{ forceRefresh: boolean }]>(() =>
      Promise.resolve(bothKeys),
    );
    const issued = issuerWith(keyB.kid).issue({ audience: 'participant', subject: 'par_1', ttlSeconds: 60 });
    await verifierWith(getJwks).verify(issued.token, { audience: 'participant' });
    expect(getJwks.mock.calls).toEqual([[{ forceRefresh: false }]]);
  });

  it('when an alg none token is presented, then it is rejected before any key lookup', async () => {
    const getJwks = jest.fn<Promise<JwksDocument>, [{ forceRefresh: boolean }]>(() =>
      Promise.resolve(bothKeys),
    );
    for (const alg of ['none', 'None', 'NONE']) {
      const token = `${b64json({ alg, typ: 'JWT' })}.${b64json(validClaims())}.`;
      const result = await rejection(verifierWith(getJwks).verify(token, { audience: 'participant' }));
      expect(result.reason).toBe('unsupported_algorithm');
    }
    const withKid = `${b64json({ alg: 'none', kid: keyA.kid })}.${b64json(validClaims())}.`;
    expect((await rejection(verifierWith(getJwks).verify(withKid, { audience: 'participant' }))).reason).toBe(
      'unsupported_algorithm',
    );
    expect(getJwks).not.toHaveBeenCalled();
  });

  it('when an HS256 token is signed with the public key as HMAC secret, then it is rejected (algorithm confusion)', async () => {
    const getJwks = jest.fn<Promise<JwksDocument>, [{ forceRefresh: boolean }]>(() =>
      Promise.resolve(bothKeys),
    );
    const publicPem = createPublicKey(keyA.privateKeyPem).export({ type: 'spki', format: 'pem' }).toString();
    const input = `${b64json({ alg: 'HS256', typ: 'JWT', kid: keyA.kid })}.${b64json(validClaims())}`;
    for (const secret of [publicPem, JSON.stringify(keyA.publicJwk)]) {
      const token = `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`;
      const result = await rejection(verifierWith(getJwks).verify(token, { audience: 'participant' }));
      expect(result.reason).toBe('unsupported_algorithm');
    }
    expect(getJwks).not.toHaveBeenCalled();
  });

  it('when a token uses another asymmetric algorithm, then it is rejected as unsupported_algorithm', async () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey;
    const rs256 = jwtSign(validClaims(), rsa, { algorithm: 'RS256', keyid: keyA.kid });
    const es384 = `${b64json({ alg: 'ES384', kid: keyA.kid })}.${b64json(validClaims())}.c2ln`;
    for (const token of [rs256, es384]) {
      expect((await rejection(verifier.verify(token, { audience: 'participant' }))).reason).toBe(
        'unsupported_algorithm',
      );
    }
  });

  it.each<[string, string]>([
    ['an empty string', ''],
    ['two segments', 'abc.def'],
    ['four segments', 'a.b.c.d'],
    ['non-base64url characters', 'a+b.c/d.e'],
    [
      'a header that is not JSON',
      `${Buffer.from('{alg').toString('base64url')}.${b64json(validClaims())}.c2ln`,
    ],
    ['a header that is a JSON array', `${b64json(['ES256'])}.${b64json(validClaims())}.c2ln`],
    ['a payload that is a JSON string', `${b64json({ alg: 'ES256', kid: 'k' })}.${b64json('hello')}.c2ln`],
    ['a header without alg', `${b64json({ kid: 'k' })}.${b64json(validClaims())}.c2ln`],
    ['a header without kid', `${b64json({ alg: 'ES256' })}.${b64json(validClaims())}.c2ln`],
    [
      'a critical header extension',
      `${b64json({ alg: 'ES256', kid: 'k', crit: ['exp'] })}.${b64json({})}.c2ln`,
    ],
    ['an oversized token', `${b64json({ alg: 'ES256', kid: 'k' })}.${'A'.repeat(9000)}.c2ln`],
  ])('when the token is %s, then it is rejected as malformed', async (_label, token) => {
    const getJwks = jest.fn<Promise<JwksDocument>, [{ forceRefresh: boolean }]>(() =>
      Promise.resolve(bothKeys),
    );
    expect((await rejection(verifierWith(getJwks).verify(token, { audience: 'participant' }))).reason).toBe(
      'malformed',
    );
    expect(getJwks).not.toHaveBeenCalled();
  });

  it('when a correctly signed token lacks or mistypes a required claim, then it is rejected as malformed', async () => {
    const variants: Record<string, unknown>[] = [
      validClaims({ sub: undefined }),
      validClaims({ sub: 42 }),
      validClaims({ jti: '' }),
      validClaims({ exp: '9999999999' }),
      validClaims({ iat: undefined }),
      validClaims({ nbf: 'soon' }),
    ];
    for (const claims of variants) {
      const token = signEs256({ alg: 'ES256', kid: keyA.kid }, claims, keyA.privateKeyPem);
      expect((await rejection(verifier.verify(token, { audience: 'participant' }))).reason).toBe('malformed');
    }
  });

  it('when the input is not a string at run time, then it is rejected as malformed', async () => {
    for (const value of [undefined, null, 42, {}]) {
      const result = await rejection(
        verifier.verify(value as unknown as string, { audience: 'participant' }),
      );
      expect(result.reason).toBe('malformed');
    }
  });

  it('when the JWKS source fails, then its error is passed through instead of a TokenError', async () => {
    const unavailable = new JwksUnavailableError('hub down');
    const issued = issuerWith(keyA.kid).issue({ audience: 'participant', subject: 'par_1', ttlSeconds: 60 });
    await expect(
      verifierWith(() => Promise.reject(unavailable)).verify(issued.token, { audience: 'participant' }),
    ).rejects.toBe(unavailable);
  });

  it('when a rejection message is read, then it never contains the token', async () => {
    const issued = issuerWith(keyA.kid).issue({ audience: 'agent', subject: 'agt_1', ttlSeconds: 60 });
    const error = await rejection(verifier.verify(issued.token, { audience: 'participant' }));
    expect(error).toBeInstanceOf(TokenError);
    expect(error.name).toBe('TokenError');
    expect(error.message).not.toContain(issued.token.split('.')[1]);
  });

  it('when the verifier is configured with a bad issuer or tolerance, then it is not created', () => {
    const getJwks = createStaticJwks(bothKeys);
    expect(() => createTokenVerifier({ issuer: '', getJwks })).toThrow(TypeError);
    expect(() => createTokenVerifier({ issuer: ISSUER, getJwks, clockToleranceSeconds: -1 })).toThrow(
      RangeError,
    );
  });
});

describe('key rotation', () => {
  const oldToken = issuerWith(keyA.kid).issue({
    audience: 'participant',
    subject: 'par_old',
    ttlSeconds: 600,
  });
  const newToken = issuerWith(keyB.kid).issue({
    audience: 'participant',
    subject: 'par_new',
    ttlSeconds: 600,
  });

  it('when the JWKS holds the old and the new key, then tokens signed by either verify', async () => {
    const verifier = verifierWith(createStaticJwks(bothKeys));
    await expect(verifier.verify(oldToken.token, { audience: 'participant' })).resolves.toMatchObject({
      sub: 'par_old',
    });
    await expect(verifier.verify(newToken.token, { audience: 'participant' })).resolves.toMatchObject({
      sub: 'par_new',
    });
  });

  it('when the old key is removed from the JWKS, then its tokens fail with unknown_key and new ones verify', async () => {
    let current: JwksDocument = bothKeys;
    const verifier = verifierWith(() => Promise.resolve(current));
    await expect(verifier.verify(oldToken.token, { audience: 'participant' })).resolves.toBeDefined();

    current = createJwksDocument([keyB.publicJwk]);
    const removed = await rejection(verifier.verify(oldToken.token, { audience: 'participant' }));
    expect(removed.reason).toBe<TokenErrorReason>('unknown_key');
    await expect(verifier.verify(newToken.token, { audience: 'participant' })).resolves.toMatchObject({
      sub: 'par_new',
    });
  });
});
