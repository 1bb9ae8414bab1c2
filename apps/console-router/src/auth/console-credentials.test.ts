import { TokenError } from '@svc/auth';
import type { TokenVerifier, VerifiedToken } from '@svc/auth';
import { createCredentialReader } from './console-credentials';

/** A verifier that accepts tokens named `good-<sub>` (expiring at `exp`) and counts its calls. */
function countingVerifier(exp: number) {
  let calls = 0;
  const verifier = {
    async verify(token: string): Promise<VerifiedToken> {
      calls += 1;
      if (!token.startsWith('good-')) throw new TokenError('bad_signature');
      return { sub: token.slice(5), aud: 'participant', jti: 'j', exp, iat: exp - 3600, claims: {} };
    },
  } as unknown as TokenVerifier;
  return { verifier, calls: () => calls };
}

describe('verified credentials are remembered until they expire', () => {
  test('when the same token comes again, then it is not verified again; a bad one always is', async () => {
    let now = 1_000_000;
    const { verifier, calls } = countingVerifier(now / 1000 + 60);
    const read = createCredentialReader(verifier, { now: () => now });
    const headers = { authorization: 'Bearer good-prt_1' };
    expect(await read(headers, '')).toEqual({
      state: 'verified',
      credential: { kind: 'participant', participantId: 'prt_1' },
    });
    await read(headers, '');
    expect(calls()).toBe(1);
    await read({ authorization: 'Bearer nope' }, '');
    await read({ authorization: 'Bearer nope' }, '');
    expect(calls()).toBe(3);
    now += 61_000;
    expect((await read(headers, '')).state).toBe('verified');
    expect(calls()).toBe(4);
  });

  test('when the cache is full, then the oldest token makes room', async () => {
    const { verifier, calls } = countingVerifier(Date.now() / 1000 + 600);
    const read = createCredentialReader(verifier, { cacheSize: 2 });
    for (const sub of ['a', 'b', 'c']) await read({ authorization: `Bearer good-${sub}` }, '');
    await read({ authorization: 'Bearer good-c' }, '');
    expect(calls()).toBe(3);
    await read({ authorization: 'Bearer good-a' }, '');
    expect(calls()).toBe(4);
  });
});

describe('the remembered credential of a request (no signature check)', () => {
  test('when a verified bearer token comes again alone, then it is remembered; with a ticket or another credential, or expired, it is not', async () => {
    let now = 1_000_000;
    const { verifier } = countingVerifier(now / 1000 + 60);
    const read = createCredentialReader(verifier, { now: () => now });
    const headers = { authorization: 'Bearer good-prt_1' };
    expect(read.remembered(headers, '')).toBeUndefined();
    await read(headers, '');
    expect(read.remembered(headers, '')).toEqual({ kind: 'participant', participantId: 'prt_1' });
    expect(read.remembered(headers, '?x=1')).toEqual({ kind: 'participant', participantId: 'prt_1' });
    expect(read.remembered(headers, '?ticket=t')).toBeUndefined();
    expect(read.remembered(headers, '?%74icket=t')).toBeUndefined();
    expect(read.remembered({ ...headers, 'x-api-key': 'k' }, '')).toBeUndefined();
    expect(read.remembered({ authorization: 'Bearer good-prt_2' }, '')).toBeUndefined();
    await read({ authorization: 'Bearer nope' }, '');
    expect(read.remembered({ authorization: 'Bearer nope' }, '')).toBeUndefined();
    now += 61_000;
    expect(read.remembered(headers, '')).toBeUndefined();
  });
});
