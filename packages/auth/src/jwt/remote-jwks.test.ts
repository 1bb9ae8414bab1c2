import { createServer } from 'node:http';
import type { IncomingHttpHeaders, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { JwksUnavailableError } from './errors';
import { createTokenIssuer } from './issuer';
import { createJwksDocument, generateSigningKey } from './keys';
import type { JwksDocument } from './keys';
import { createRemoteJwks } from './remote-jwks';
import { createTokenVerifier } from './verifier';

const ISSUER = 'https://hub.test';
const T0 = 1_750_000_000_000;

const keyA = generateSigningKey();
const keyB = generateSigningKey();

interface JwksServer {
  url: string;
  /** What the next responses carry. */
  status: number;
  body: string;
  /** Requests received so far. */
  hits: number;
  lastHeaders: IncomingHttpHeaders | null;
  /** When set, responses wait until `release` is called. */
  hold: boolean;
  release(): void;
  serve(doc: JwksDocument): void;
  close(): Promise<void>;
}

async function startJwksServer(initial: JwksDocument): Promise<JwksServer> {
  let waiting: (() => void)[] = [];
  const state = {
    url: '',
    status: 200,
    body: JSON.stringify(initial),
    hits: 0,
    lastHeaders: null as IncomingHttpHeaders | null,
    hold: false,
    release(): void {
      const pending = waiting;
      waiting = [];
      state.hold = false;
      pending.forEach((respond) => respond());
    },
    serve(doc: JwksDocument): void {
      state.status = 200;
      state.body = JSON.stringify(doc);
    },
    close: async (): Promise<void> => undefined,
  };
  const server: Server = createServer((req, res) => {
    state.hits += 1;
    state.lastHeaders = req.headers;
    const respond = (): void => {
      res.writeHead(state.status, { 'content-type': 'application/json' });
      res.end(state.body);
    };
    if (state.hold) {
      waiting.push(respond);
    } else {
      respond();
    }
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  state.url = `http://127.0.0.1:${port}/.well-known/jwks.json`;
  state.close = () =>
    new Promise<void>((resolve, reject) => {
      server.close((error) => (error ? reject(error) : resolve()));
      server.closeAllConnections();
    });
  return state;
}

let server: JwksServer;
let clock: number;
const now = (): number => clock;

beforeEach(async () => {
  clock = T0;
  server = await startJwksServer(createJwksDocument([keyA.publicJwk]));
});

afterEach(async () => {
  await server.close();
});

describe('createRemoteJwks', () => {
  it('when called twice within the cache TTL, then the JWKS is fetched once', async () => {
    const getJwks = createRemoteJwks({ url: server.url, now });
    const first = await getJwks({ forceRefresh: false });
    clock += 299_000;
    const second = await getJwks({ forceRefresh: false });
    expect(first).toEqual({ keys: [keyA.publicJwk] });
    expect(second).toBe(first);
    expect(server.hits).toBe(1);
    expect(server.lastHeaders?.accept).toBe('application/json');
  });

  it('when the cache TTL has passed, then the next call refetches and sees the new keys', async () => {
    const getJwks = createRemoteJwks({ url: server.url, now, cacheTtlMs: 60_000 });
    await getJwks({ forceRefresh: false });
    server.serve(createJwksDocument([keyA.publicJwk, keyB.publicJwk]));
    clock += 60_000;
    const refreshed = await getJwks({ forceRefresh: false });
    expect(refreshed.keys.map((key) => key.kid)).toEqual([keyA.kid, keyB.kid]);
    expect(server.hits).toBe(2);
  });

  it('when many callers ask at once, then they share a single request', async () => {
    const getJwks = createRemoteJwks({ url: server.url, now });
    server.hold = true;
    const pending = [
      getJwks({ forceRefresh: false }),
      getJwks({ forceRefresh: false }),
      getJwks({ forceRefresh: true }),
      getJwks({ forceRefresh: false }),
    ];
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect(server.hits).toBe(1);
    server.release();
    const docs = await Promise.all(pending);
    expect(new Set(docs).size).toBe(1);
    expect(server.hits).toBe(1);
  });

  it('when forced refreshes come faster than the minimum interval, then only one refetch happens per interval', async () => {
    const getJwks = createRemoteJwks({ url: server.url, now, minRefreshIntervalMs: 10_000 });
    await getJwks({ forceRefresh: false });
    clock += 1_000;
    await getJwks({ forceRefresh: true });
    await getJwks({ forceRefresh: true });
    expect(server.hits).toBe(1);
    clock += 10_000;
    await getJwks({ forceRefresh: true });
    expect(server.hits).toBe(2);
    clock += 5_000;
    await getJwks({ forceRefresh: true });
    expect(server.hits).toBe(2);
  });

  it('when a custom fetch is supplied, then it is used for the request', async () => {
    const customFetch = jest.fn<ReturnType<typeof fetch>, Parameters<typeof fetch>>((input, init) =>
      fetch(input, init),
    );
    const getJwks = createRemoteJwks({ url: server.url, now, fetch: customFetch });
    await getJwks({ forceRefresh: false });
    expect(customFetch).toHaveBeenCalledTimes(1);
    expect(customFetch.mock.calls[0]?.[0]).toBe(server.url);
  });

  it('when the document lists foreign or incomplete keys, then only ES256 P-256 keys with a kid are kept, public members only', async () => {
    server.body = JSON.stringify({
      keys: [
        { kty: 'RSA', kid: 'rsa-1', n: 'abc', e: 'AQAB', alg: 'RS256' },
        { ...keyB.publicJwk, kid: undefined },
        { ...keyB.publicJwk, alg: 'ES384' },
        { ...keyB.publicJwk, use: 'enc' },
        { ...keyA.publicJwk, d: 'leaked-private-part' },
        { ...keyA.publicJwk, x: 'duplicate-kid-is-ignored' },
      ],
    });
    const getJwks = createRemoteJwks({ url: server.url, now });
    await expect(getJwks({ forceRefresh: false })).resolves.toEqual({ keys: [keyA.publicJwk] });
  });

  it('when the server answers with an error status and nothing is cached, then JwksUnavailableError is thrown and retried only after the interval', async () => {
    server.status = 500;
    server.body = '{"error":"boom"}';
    const getJwks = createRemoteJwks({ url: server.url, now, minRefreshIntervalMs: 10_000 });
    await expect(getJwks({ forceRefresh: false })).rejects.toBeInstanceOf(JwksUnavailableError);
    await expect(getJwks({ forceRefresh: true })).rejects.toThrow('HTTP 500');
    expect(server.hits).toBe(1);
    server.serve(createJwksDocument([keyA.publicJwk]));
    clock += 10_000;
    await expect(getJwks({ forceRefresh: false })).resolves.toEqual({ keys: [keyA.publicJwk] });
    expect(server.hits).toBe(2);
  });

  it.each([
    ['a body that is not JSON', 'not json'],
    ['a body without a keys array', '{"keys":"nope"}'],
    ['a JSON null body', 'null'],
  ])('when the server returns %s, then JwksUnavailableError is thrown', async (_label, body) => {
    server.body = body;
    const getJwks = createRemoteJwks({ url: server.url, now });
    await expect(getJwks({ forceRefresh: false })).rejects.toBeInstanceOf(JwksUnavailableError);
  });

  it('when nothing listens on the address, then JwksUnavailableError is thrown', async () => {
    const vacant = createServer();
    await new Promise<void>((resolve) => vacant.listen(0, '127.0.0.1', resolve));
    const { port } = vacant.address() as AddressInfo;
    await new Promise<void>((resolve) => vacant.close(() => resolve()));
    const getJwks = createRemoteJwks({ url: `http://127.0.0.1:${port}/.well-known/jwks.json`, now });
    const error: unknown = await getJwks({ forceRefresh: false }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(JwksUnavailableError);
    expect((error as Error).name).toBe('JwksUnavailableError');
  });

  it('when a refetch fails after the cache expired, then the last good document is served within the stale window only', async () => {
    const getJwks = createRemoteJwks({
      url: server.url,
      now,
      cacheTtlMs: 60_000,
      minRefreshIntervalMs: 10_000,
      staleIfErrorMs: 120_000,
    });
    const good = await getJwks({ forceRefresh: false });
    server.status = 503;
    clock += 61_000;
    await expect(getJwks({ forceRefresh: false })).resolves.toBe(good);
    clock += 5_000;
    await expect(getJwks({ forceRefresh: false })).resolves.toBe(good);
    expect(server.hits).toBe(2);
    clock = T0 + 60_000 + 120_000;
    await expect(getJwks({ forceRefresh: false })).rejects.toBeInstanceOf(JwksUnavailableError);
    expect(server.hits).toBe(3);
  });

  it('when stale serving is disabled and a refetch fails after expiry, then JwksUnavailableError is thrown', async () => {
    const getJwks = createRemoteJwks({ url: server.url, now, cacheTtlMs: 60_000, staleIfErrorMs: 0 });
    await getJwks({ forceRefresh: false });
    server.status = 500;
    clock += 60_000;
    await expect(getJwks({ forceRefresh: false })).rejects.toBeInstanceOf(JwksUnavailableError);
  });

  it('when a forced refresh fails while the cache is fresh, then the cached document is returned', async () => {
    const getJwks = createRemoteJwks({ url: server.url, now });
    const good = await getJwks({ forceRefresh: false });
    server.status = 500;
    clock += 20_000;
    await expect(getJwks({ forceRefresh: true })).resolves.toBe(good);
    expect(server.hits).toBe(2);
  });
});

describe('token verification against a remote JWKS', () => {
  const issue = (key: typeof keyA, subject: string): string =>
    createTokenIssuer({ issuer: ISSUER, keys: [key], activeKid: key.kid, now }).issue({
      audience: 'participant',
      subject,
      ttlSeconds: 3_600,
    }).token;

  it('when the hub rotates in a new key, then its tokens verify after one forced refresh and random kids cause no extra fetches', async () => {
    const verifier = createTokenVerifier({
      issuer: ISSUER,
      getJwks: createRemoteJwks({ url: server.url, now, minRefreshIntervalMs: 10_000 }),
      now,
    });
    await expect(verifier.verify(issue(keyA, 'par_a'), { audience: 'participant' })).resolves.toMatchObject({
      sub: 'par_a',
    });
    expect(server.hits).toBe(1);

    server.serve(createJwksDocument([keyA.publicJwk, keyB.publicJwk]));
    clock += 11_000;
    await expect(verifier.verify(issue(keyB, 'par_b'), { audience: 'participant' })).resolves.toMatchObject({
      sub: 'par_b',
    });
    expect(server.hits).toBe(2);

    const stranger = generateSigningKey();
    for (let i = 0; i < 5; i += 1) {
      await expect(
        verifier.verify(issue(stranger, 'par_x'), { audience: 'participant' }),
      ).rejects.toMatchObject({
        reason: 'unknown_key',
      });
    }
    expect(server.hits).toBe(2);
  });

  it('when the hub is unreachable and nothing is cached, then verification fails with JwksUnavailableError, not a TokenError', async () => {
    server.status = 502;
    const verifier = createTokenVerifier({
      issuer: ISSUER,
      getJwks: createRemoteJwks({ url: server.url, now }),
      now,
    });
    await expect(verifier.verify(issue(keyA, 'par_a'), { audience: 'participant' })).rejects.toBeInstanceOf(
      JwksUnavailableError,
    );
  });
});
