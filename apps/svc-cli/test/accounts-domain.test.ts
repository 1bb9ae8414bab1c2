import { generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { redact } from '../src/domain/redact';
import { flattenForDisplay, secretPresence } from '../src/domain/secret-presence';
import { decodeTokenFacts, TokenDecodeError } from '../src/domain/token-claims';

/** A real ES256 JWT, signed with a throw-away key. */
function es256Jwt(payload: Record<string, unknown>): string {
  const { privateKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  const enc = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
  const input = `${enc({ alg: 'ES256', typ: 'JWT', kid: 'k1' })}.${enc(payload)}`;
  const signature = sign('sha256', Buffer.from(input), { key: privateKey, dsaEncoding: 'ieee-p1363' });
  return `${input}.${signature.toString('base64url')}`;
}

describe('decodeTokenFacts', () => {
  const now = Date.parse('2026-11-24T12:00:00Z');

  it('when an agent token is decoded, then subject, audience, expiry and plain claims come out, and no scopes', () => {
    const token = es256Jwt({
      iss: 'http://hub',
      sub: 'agt_1',
      aud: 'agent',
      iat: now / 1000 - 60,
      exp: now / 1000 + 3540,
      jti: 'tok_1',
      workspace_id: 'wsp_1',
      runtime_instance_id: 'rti_1',
      agent_name: 'reviewer',
    });
    expect(decodeTokenFacts(token, now)).toEqual({
      subject: 'agt_1',
      audience: 'agent',
      issuer: 'http://hub',
      issued_at: '2026-11-24T11:59:00.000Z',
      expires_at: '2026-11-24T12:59:00.000Z',
      expires_in_seconds: 3540,
      expired: false,
      token_id: 'tok_1',
      scopes: null,
      claims: { workspace_id: 'wsp_1', runtime_instance_id: 'rti_1', agent_name: 'reviewer' },
    });
  });

  it('when a token carries scopes (array or space-separated), then they are listed; a past exp is expired', () => {
    expect(decodeTokenFacts(es256Jwt({ sub: 'a', scopes: ['agents:read'] }), now).scopes).toEqual([
      'agents:read',
    ]);
    const facts = decodeTokenFacts(es256Jwt({ sub: 'a', scope: 'a:b c:d', exp: now / 1000 - 1 }), now);
    expect(facts.scopes).toEqual(['a:b', 'c:d']);
    expect(facts.expired).toBe(true);
  });

  it.each(['', 'abc', 'a.b', `a.${Buffer.from('[1]').toString('base64url')}.c`, 'a.%%%.c'])(
    'when %p is not a decodable JWT, then a TokenDecodeError says so',
    (token) => {
      expect(() => decodeTokenFacts(token, now)).toThrow(TokenDecodeError);
    },
  );
});

describe('config show and redact over a real-looking config', () => {
  const participantToken = es256Jwt({ sub: 'prt_1', aud: 'participant' });
  const agentToken = es256Jwt({ sub: 'agt_1', aud: 'agent' });
  const relayToken = `rly_${randomBytes(32).toString('base64url')}`;
  const apiKey = `svc_${randomBytes(24).toString('base64url')}`;
  const config = {
    profile: {
      hub_url: 'https://hub.example',
      participant: { email: 'a@b.c', token: participantToken, expires_at: '2026-11-24T12:00:00Z' },
    },
    runtime_env: { SVC_RELAY_TOKEN: relayToken, SVC_WORKSPACE_API_KEY: apiKey, OTHER: 'x' },
    environment: { SVC_WORKSPACE_API_KEY: null, SVC_RUNTIME_INSTANCE_ID: 'rti_1' },
    agents: [
      {
        name: 'a',
        agent_token: agentToken,
        argv: ['node', `--token=${agentToken}`],
        runtime_credential: null,
      },
    ],
  };

  it('when secrets are shown by presence, then each is present or absent and no value survives', () => {
    const shown = secretPresence(config);
    const text = JSON.stringify(shown);
    for (const secret of [participantToken, agentToken, relayToken, apiKey])
      expect(text).not.toContain(secret);
    expect(shown).toMatchObject({
      profile: { participant: { token: 'present', expires_at: '2026-11-24T12:00:00Z' } },
      runtime_env: { SVC_RELAY_TOKEN: 'present', SVC_WORKSPACE_API_KEY: 'present', OTHER: 'x' },
      environment: { SVC_WORKSPACE_API_KEY: 'absent', SVC_RUNTIME_INSTANCE_ID: 'rti_1' },
      agents: [
        { agent_token: 'present', argv: ['node', '--token=[redacted]'], runtime_credential: 'absent' },
      ],
    });
  });

  it('when the config is redacted, then no value survives, by field name or by shape', () => {
    const text = JSON.stringify(redact(config));
    for (const secret of [participantToken, agentToken, relayToken, apiKey])
      expect(text).not.toContain(secret);
    expect(text).toContain('rti_1');
  });

  it('when a document is flattened for people, then each leaf is one dotted key', () => {
    expect(flattenForDisplay({ a: { b: 1, c: [1, 2] }, d: null, e: [{ f: 'g' }] })).toEqual([
      ['a.b', '1'],
      ['a.c', '1 2'],
      ['d', '-'],
      ['e[0].f', 'g'],
    ]);
  });
});
