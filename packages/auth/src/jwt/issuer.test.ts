import { decodeSegment, ISSUER, issuerWith, keyA, keyB, NOW_MS, NOW_S } from '../../test/support/tokens';
import { createTokenIssuer } from './issuer';

describe('createTokenIssuer', () => {
  it('when a token is issued, then header and payload carry the documented claims', () => {
    const issued = issuerWith(keyA.kid).issue({
      audience: 'agent',
      subject: 'agt_1',
      ttlSeconds: 900,
      claims: { workspace_id: 'ws_1', runtime_instance_id: 'rti_1' },
    });
    expect(decodeSegment(issued.token, 0)).toEqual({ alg: 'ES256', typ: 'JWT', kid: keyA.kid });
    expect(decodeSegment(issued.token, 1)).toEqual({
      workspace_id: 'ws_1',
      runtime_instance_id: 'rti_1',
      iss: ISSUER,
      sub: 'agt_1',
      aud: 'agent',
      iat: NOW_S,
      exp: NOW_S + 900,
      jti: issued.jti,
    });
    expect(issued.jti).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(issued.expiresAt.getTime()).toBe(NOW_MS + 900_000);
  });

  it('when two tokens are issued, then their jti differ', () => {
    const issuer = issuerWith(keyA.kid);
    const input = { audience: 'participant', subject: 'par_1', ttlSeconds: 60 } as const;
    expect(issuer.issue(input).jti).not.toBe(issuer.issue(input).jti);
  });

  it.each(['iss', 'sub', 'aud', 'iat', 'exp', 'nbf', 'jti'])(
    'when claims try to set the reserved %s claim, then issuing is refused',
    (name) => {
      expect(() =>
        issuerWith(keyA.kid).issue({
          audience: 'participant',
          subject: 'par_1',
          ttlSeconds: 60,
          claims: { [name]: 'attacker' },
        }),
      ).toThrow(/reserved/);
    },
  );

  it('when ttl, subject or audience are invalid, then issuing is refused', () => {
    const issuer = issuerWith(keyA.kid);
    expect(() => issuer.issue({ audience: 'agent', subject: 'a', ttlSeconds: 0 })).toThrow(RangeError);
    expect(() => issuer.issue({ audience: 'agent', subject: 'a', ttlSeconds: 1.5 })).toThrow(RangeError);
    expect(() => issuer.issue({ audience: 'agent', subject: '', ttlSeconds: 60 })).toThrow(TypeError);
    expect(() =>
      issuer.issue({ audience: 'admin' as unknown as 'agent', subject: 'a', ttlSeconds: 60 }),
    ).toThrow(TypeError);
  });

  it('when the active kid is unknown or keys are duplicated, then the issuer is not created', () => {
    expect(() =>
      createTokenIssuer({
        issuer: ISSUER,
        keys: [{ kid: keyA.kid, privateKeyPem: keyA.privateKeyPem }],
        activeKid: 'x',
      }),
    ).toThrow(/activeKid/);
    expect(() =>
      createTokenIssuer({
        issuer: ISSUER,
        keys: [
          { kid: 'k', privateKeyPem: keyA.privateKeyPem },
          { kid: 'k', privateKeyPem: keyB.privateKeyPem },
        ],
        activeKid: 'k',
      }),
    ).toThrow(/duplicate/);
    expect(() => createTokenIssuer({ issuer: '', keys: [keyA], activeKid: keyA.kid })).toThrow(TypeError);
  });

  it('when the issuer publishes its JWKS, then it lists the public half of every key it holds', () => {
    expect(issuerWith(keyA.kid).jwks()).toEqual({ keys: [keyA.publicJwk, keyB.publicJwk] });
  });
});
