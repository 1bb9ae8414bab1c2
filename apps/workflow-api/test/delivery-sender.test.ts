import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { AppError } from '@svc/service-kit';
import {
  DELIVERY_USER_AGENT,
  DeliveryAgentPool,
  deliveryRequestOptions,
  networkErrorCode,
  parseRetryAfter,
  sendDelivery,
} from '../src/transport/http-sender';
import type { SendDeliveryOptions } from '../src/transport/http-sender';
import { addressKind, checkDeliveryUrl, DeliveryUrlError } from '../src/domain/url-guard';
import type { DeliveryResolver, ResolvedAddress } from '../src/domain/url-guard';
import { makeTestCertificate } from './support/tls-fixture';
import type { TestCertificate } from './support/tls-fixture';

interface Received {
  method: string;
  url: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

let certificate: TestCertificate | undefined;
let ca: string;
let receiver: https.Server;
let receiverPort: number;
let secureConnections = 0;
let elsewhere: https.Server;
let elsewherePort: number;
let elsewhereHits = 0;
let plain: http.Server;
let plainPort: number;
const received: Received[] = [];
const agents = new DeliveryAgentPool();

/** Answers by path; the slow paths hold the response open until the servers close. */
function receive(req: http.IncomingMessage, res: http.ServerResponse): void {
  const chunks: Buffer[] = [];
  req.on('data', (chunk: Buffer) => chunks.push(chunk));
  req.on('end', () => {
    const body = Buffer.concat(chunks).toString('utf8');
    received.push({ method: req.method ?? '', url: req.url ?? '', headers: req.headers, body });
    const pathname = (req.url ?? '/').split('?')[0];
    switch (pathname) {
      case '/ok':
        res.writeHead(200, { 'content-type': 'text/plain' }).end('accepted');
        return;
      case '/fail':
        res.writeHead(500, { 'retry-after': '120' }).end('try later');
        return;
      case '/redirect':
        res.writeHead(301, { location: `https://127.0.0.1:${elsewherePort}/landing` }).end();
        return;
      case '/big':
        res.writeHead(200).end('€'.repeat(5000));
        return;
      case '/nul':
        res.writeHead(202).end('ok\u0000done');
        return;
      case '/slow-headers':
        return;
      case '/slow-body':
        res.writeHead(200);
        res.write('partial');
        return;
      default:
        res.writeHead(404).end();
    }
  });
}

async function listen(server: http.Server | https.Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

async function shut(server: http.Server | https.Server): Promise<void> {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
}

beforeAll(async () => {
  certificate = makeTestCertificate(['hooks.example.test']);
  ca = certificate.cert;
  const tls = { key: certificate.key, cert: ca };

  receiver = https.createServer(tls, receive);
  receiver.on('secureConnection', () => secureConnections++);
  receiverPort = await listen(receiver);

  elsewhere = https.createServer(tls, (_req, res) => {
    elsewhereHits++;
    res.writeHead(200).end('elsewhere');
  });
  elsewherePort = await listen(elsewhere);

  plain = http.createServer(receive);
  plainPort = await listen(plain);
});

afterAll(async () => {
  agents.close();
  await Promise.all([receiver, elsewhere, plain].filter(Boolean).map(shut));
  certificate?.remove();
});

beforeEach(() => {
  received.length = 0;
});

const base = (): Omit<SendDeliveryOptions, 'url'> => ({
  headers: { 'x-svc-delivery-id': 'dlv_test', 'content-type': 'application/json' },
  body: '{"event":"run.completed","note":"café"}',
  allowLoopbackHttp: true,
  ca,
  agents,
});

/** A resolver that fails the test when called (IP literals and refused names never reach DNS). */
const noDns: DeliveryResolver = async (host) => {
  throw new Error(`unexpected lookup of ${host}`);
};

/** Answers with each list in turn (the last one repeats), counting the calls. */
function scriptedResolver(...answers: ResolvedAddress[][]): DeliveryResolver & { calls: string[] } {
  const calls: string[] = [];
  const resolve = async (host: string) => {
    calls.push(host);
    return answers[Math.min(calls.length, answers.length) - 1] ?? [];
  };
  return Object.assign(resolve, { calls });
}

async function refusal(raw: string, allowLoopbackHttp = false, resolve: DeliveryResolver = noDns) {
  try {
    await checkDeliveryUrl(raw, { allowLoopbackHttp, resolve });
  } catch (error) {
    if (error instanceof DeliveryUrlError) return error.code;
    throw error;
  }
  return 'allowed';
}

describe('checkDeliveryUrl', () => {
  it.each([
    ['https://127.0.0.1/', 'url_resolves_to_forbidden_address'],
    ['https://127.8.9.10:8443/hook', 'url_resolves_to_forbidden_address'],
    ['https://10.1.2.3/', 'url_resolves_to_forbidden_address'],
    ['https://169.254.169.254/latest/meta-data/', 'url_resolves_to_forbidden_address'],
    ['https://[::1]/', 'url_resolves_to_forbidden_address'],
    ['https://[::ffff:127.0.0.1]/', 'url_resolves_to_forbidden_address'],
    ['https://[::ffff:a9fe:a9fe]/', 'url_resolves_to_forbidden_address'],
    ['https://[::ffff:10.0.0.1]/', 'url_resolves_to_forbidden_address'],
    ['https://[::127.0.0.1]/', 'url_resolves_to_forbidden_address'],
    ['https://[::ffff:0:10.0.0.1]/', 'url_resolves_to_forbidden_address'],
    ['https://localhost/', 'url_host_not_allowed'],
    ['https://LOCALHOST./', 'url_host_not_allowed'],
    ['https://api.localhost/', 'url_host_not_allowed'],
    ['https://metadata.google.internal/computeMetadata/v1/', 'url_host_not_allowed'],
    ['https://metadata/', 'url_host_not_allowed'],
    ['https://0x7f000001/', 'url_resolves_to_forbidden_address'],
    ['https://2130706433/', 'url_resolves_to_forbidden_address'],
    ['https://0x7f.1/', 'url_resolves_to_forbidden_address'],
    ['https://0177.0.0.1/', 'url_resolves_to_forbidden_address'],
    ['https://127.1/', 'url_resolves_to_forbidden_address'],
    ['https://0xa9.0xfe.0xa9.0xfe/', 'url_resolves_to_forbidden_address'],
    ['https://0.0.0.0/', 'url_resolves_to_forbidden_address'],
    ['https://0/', 'url_resolves_to_forbidden_address'],
    ['https://100.64.0.1/', 'url_resolves_to_forbidden_address'],
    ['https://100.127.255.254/', 'url_resolves_to_forbidden_address'],
    ['https://172.16.0.1/', 'url_resolves_to_forbidden_address'],
    ['https://172.31.255.255/', 'url_resolves_to_forbidden_address'],
    ['https://192.0.0.8/', 'url_resolves_to_forbidden_address'],
    ['https://192.0.2.1/', 'url_resolves_to_forbidden_address'],
    ['https://192.168.1.1/', 'url_resolves_to_forbidden_address'],
    ['https://198.18.0.1/', 'url_resolves_to_forbidden_address'],
    ['https://198.19.255.255/', 'url_resolves_to_forbidden_address'],
    ['https://198.51.100.7/', 'url_resolves_to_forbidden_address'],
    ['https://203.0.113.9/', 'url_resolves_to_forbidden_address'],
    ['https://224.0.0.1/', 'url_resolves_to_forbidden_address'],
    ['https://239.255.255.250/', 'url_resolves_to_forbidden_address'],
    ['https://240.0.0.1/', 'url_resolves_to_forbidden_address'],
    ['https://255.255.255.255/', 'url_resolves_to_forbidden_address'],
    ['https://[::]/', 'url_resolves_to_forbidden_address'],
    ['https://[fc00::1]/', 'url_resolves_to_forbidden_address'],
    ['https://[fd12:3456::1]/', 'url_resolves_to_forbidden_address'],
    ['https://[fe80::1]/', 'url_resolves_to_forbidden_address'],
    ['https://[febf:ffff::1]/', 'url_resolves_to_forbidden_address'],
    ['https://[ff02::1]/', 'url_resolves_to_forbidden_address'],
    ['https://[64:ff9b::808:808]/', 'url_resolves_to_forbidden_address'],
    ['https://[2001:db8::1]/', 'url_resolves_to_forbidden_address'],
    ['https://[2002:a00:1::]/', 'url_resolves_to_forbidden_address'],
    ['https://[fe80::1%25eth0]/', 'url_invalid'],
    ['http://2130706433/', 'url_scheme_not_allowed'],
  ])('when the URL is %s, then it is refused with %s', async (raw, code) => {
    expect(await refusal(raw)).toBe(code);
  });

  it.each([
    'https://93.184.216.34/hook',
    'https://8.8.8.8:8443/',
    'https://172.32.0.1/',
    'https://172.15.255.255/',
    'https://100.128.0.1/',
    'https://192.169.0.1/',
    'https://198.20.0.1/',
    'https://223.255.255.255/',
    'https://[2606:4700:4700::1111]/',
    'https://[::ffff:8.8.8.8]/',
    'https://[2002:808:808::1]/',
  ])('when the URL is the public address %s, then it is allowed without a lookup', async (raw) => {
    expect(await refusal(raw)).toBe('allowed');
  });

  it('when a host name resolves to public addresses, then the URL (port, path, query) and every address are returned', async () => {
    const resolve = scriptedResolver([
      { address: '2606:4700::6810:84e5', family: 6 },
      { address: '104.16.132.229', family: 4 },
    ]);
    const checked = await checkDeliveryUrl('https://Hooks.Example.com:8443/in?x=1', {
      allowLoopbackHttp: false,
      resolve,
    });
    expect(resolve.calls).toEqual(['hooks.example.com']);
    expect(checked.url.port).toBe('8443');
    expect(checked.url.search).toBe('?x=1');
    expect(checked.addresses).toEqual([
      { address: '2606:4700::6810:84e5', family: 6 },
      { address: '104.16.132.229', family: 4 },
    ]);
  });

  it.each([
    [
      [
        { address: '93.184.216.34', family: 4 },
        { address: '10.0.0.1', family: 4 },
      ],
    ],
    [[{ address: '169.254.169.254', family: 4 }]],
    [[{ address: '::ffff:169.254.169.254', family: 6 }]],
    [[{ address: 'fe80::1%eth0', family: 6 }]],
    [[{ address: 'fe80::abcd%2', family: 6 }]],
    [[{ address: '127.0.0.1', family: 4 }]],
  ])('when any resolved address is forbidden (%j), then the URL is refused', async (answer) => {
    expect(await refusal('https://hooks.example.com/', false, scriptedResolver(answer))).toBe(
      'url_resolves_to_forbidden_address',
    );
  });

  it('when the host does not resolve, then url_unresolvable', async () => {
    const failing: DeliveryResolver = async () => {
      throw Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' });
    };
    expect(await refusal('https://nowhere.example.com/', false, failing)).toBe('url_unresolvable');
    expect(await refusal('https://nowhere.example.com/', false, scriptedResolver([]))).toBe(
      'url_unresolvable',
    );
    expect(
      await refusal(
        'https://odd.example.com/',
        false,
        scriptedResolver([{ address: 'not-an-ip', family: 4 }]),
      ),
    ).toBe('url_unresolvable');
  });

  it.each([
    ['not a url', 'url_invalid'],
    ['/relative/path', 'url_invalid'],
    ['', 'url_invalid'],
    [`https://example.com/${'a'.repeat(3000)}`, 'url_invalid'],
    ['https://999.1.1.1/', 'url_invalid'],
    ['ftp://example.com/', 'url_scheme_not_allowed'],
    ['file:///etc/passwd', 'url_scheme_not_allowed'],
    ['gopher://example.com/', 'url_scheme_not_allowed'],
    ['http://example.com/', 'url_scheme_not_allowed'],
    ['https://user:hunter2@example.com/', 'url_credentials_not_allowed'],
    ['https://user@example.com/', 'url_credentials_not_allowed'],
  ])('when the URL is %s, then %s', async (raw, code) => {
    expect(await refusal(raw)).toBe(code);
  });

  it('when a URL is refused, then the error is a 400 AppError whose message does not repeat the URL', async () => {
    const error = await checkDeliveryUrl('https://user:hunter2@example.com/?token=sekret', {
      allowLoopbackHttp: false,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(DeliveryUrlError);
    expect(error).toBeInstanceOf(AppError);
    const appError = error as AppError;
    expect(appError.status).toBe(400);
    expect(appError.code).toBe('url_credentials_not_allowed');
    expect(appError.detail).toBe(appError.message);
    expect(appError.message).not.toMatch(/hunter2|sekret|example\.com/);
  });

  describe('with allowLoopbackHttp (development)', () => {
    it.each(['http://127.0.0.1:8080/', 'https://127.0.0.1/', 'http://[::1]:3000/', 'http://127.1.2.3/'])(
      'when the URL is the loopback %s, then it is allowed',
      async (raw) => {
        expect(await refusal(raw, true)).toBe('allowed');
      },
    );

    it('when localhost resolves (system resolver) to loopback only, then http is allowed', async () => {
      const checked = await checkDeliveryUrl('http://localhost:1/hook', { allowLoopbackHttp: true });
      expect(checked.addresses.length).toBeGreaterThan(0);
      for (const { address } of checked.addresses) expect(addressKind(address)).toBe('loopback');
    });

    it.each([
      ['https://10.0.0.1/', 'url_resolves_to_forbidden_address'],
      ['https://169.254.169.254/', 'url_resolves_to_forbidden_address'],
      ['http://192.168.0.10/', 'url_resolves_to_forbidden_address'],
      ['https://[fd00::1]/', 'url_resolves_to_forbidden_address'],
      ['https://metadata.google.internal/', 'url_host_not_allowed'],
      ['http://93.184.216.34/', 'url_scheme_not_allowed'],
    ])('when the URL is %s, then it is still refused with %s', async (raw, code) => {
      expect(await refusal(raw, true)).toBe(code);
    });

    it('when an http host resolves to loopback and a public address, then http is refused', async () => {
      const mixed = scriptedResolver([
        { address: '127.0.0.1', family: 4 },
        { address: '93.184.216.34', family: 4 },
      ]);
      expect(await refusal('http://dev.example.com/', true, mixed)).toBe('url_scheme_not_allowed');
      expect(await refusal('https://dev.example.com/', true, mixed)).toBe('allowed');
    });
  });
});

describe('addressKind', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.255.254', 'loopback'],
    ['::1', 'loopback'],
    ['0:0:0:0:0:0:0:1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['1.1.1.1', 'public'],
    ['2a00:1450:4001:80b::200e', 'public'],
    ['0:0:0:0:0:ffff:a00:1', 'forbidden'],
    ['::ffff:0.0.0.0', 'forbidden'],
    ['fe80::1%eth0', 'forbidden'],
    ['FE80::1', 'forbidden'],
    ['2001:0:4136:e378:8000:63bf:3fff:fdd2', 'forbidden'],
    ['64:ff9b:1::a00:1', 'forbidden'],
    ['fec0::1', 'forbidden'],
    ['100::1', 'forbidden'],
    ['garbage', 'invalid'],
    ['1.2.3', 'invalid'],
    ['01.2.3.4', 'invalid'],
    ['1:2:3:4:5:6:7:8:9', 'invalid'],
    ['', 'invalid'],
  ])('when the address is %j, then it is %s', (address, kind) => {
    expect(addressKind(address)).toBe(kind);
  });
});

describe('sendDelivery', () => {
  const urlOf = (p: string, port = receiverPort) => `https://127.0.0.1:${port}${p}`;

  it('when the receiver answers 200, then status, snippet and latency are captured and the POST is exact', async () => {
    const options = base();
    const result = await sendDelivery({ ...options, url: urlOf('/ok?key=secret-query') });
    expect(result).toMatchObject({
      status: 200,
      responseSnippet: 'accepted',
      retryAfterMs: null,
      error: null,
    });
    expect(result.latencyMs).toBeGreaterThanOrEqual(0);
    expect(received).toHaveLength(1);
    const [request] = received;
    expect(request?.method).toBe('POST');
    expect(request?.url).toBe('/ok?key=secret-query');
    expect(request?.body).toBe(options.body);
    expect(request?.headers['user-agent']).toBe(DELIVERY_USER_AGENT);
    expect(request?.headers['content-length']).toBe(String(Buffer.byteLength(options.body)));
    expect(request?.headers['content-type']).toBe('application/json');
    expect(request?.headers['x-svc-delivery-id']).toBe('dlv_test');
  });

  it('when the receiver answers 500 with Retry-After, then the status and the delay are returned', async () => {
    const result = await sendDelivery({ ...base(), url: urlOf('/fail') });
    expect(result).toMatchObject({
      status: 500,
      responseSnippet: 'try later',
      retryAfterMs: 120_000,
      error: null,
    });
  });

  it('when the receiver answers 301 elsewhere, then the redirect is not followed', async () => {
    const result = await sendDelivery({ ...base(), url: urlOf('/redirect') });
    expect(result.status).toBe(301);
    expect(result.error).toBeNull();
    expect(elsewhereHits).toBe(0);
  });

  it('when the receiver never answers, then the attempt ends as a timeout within the bound', async () => {
    const result = await sendDelivery({ ...base(), url: urlOf('/slow-headers'), timeoutMs: 300 });
    expect(result).toMatchObject({ status: null, error: 'timeout' });
    expect(result.latencyMs).toBeGreaterThanOrEqual(290);
    expect(result.latencyMs).toBeLessThan(2_000);
  });

  it('when the body trickles past the deadline, then the attempt is a timeout (status kept)', async () => {
    const result = await sendDelivery({ ...base(), url: urlOf('/slow-body'), timeoutMs: 300 });
    expect(result).toMatchObject({ status: 200, responseSnippet: 'partial', error: 'timeout' });
    expect(result.latencyMs).toBeLessThan(2_000);
  });

  it('when name resolution hangs, then the attempt is a timeout', async () => {
    const hanging: DeliveryResolver = () => new Promise(() => undefined);
    const result = await sendDelivery({
      ...base(),
      url: 'https://slow-dns.example.com/',
      resolve: hanging,
      timeoutMs: 200,
    });
    expect(result).toMatchObject({ status: null, error: 'timeout' });
    expect(result.latencyMs).toBeLessThan(2_000);
  });

  it('when the response body is large, then the snippet is its first 2 KiB without a cut character', async () => {
    const result = await sendDelivery({ ...base(), url: urlOf('/big') });
    expect(result.status).toBe(200);
    // '€' is 3 bytes: 682 whole characters fit in 2048 bytes.
    expect(result.responseSnippet).toBe('€'.repeat(682));
    expect(Buffer.byteLength(result.responseSnippet)).toBeLessThanOrEqual(2048);
  });

  it('when the response body holds NUL, then the snippet has U+FFFD in its place (Postgres text has no NUL)', async () => {
    const result = await sendDelivery({ ...base(), url: urlOf('/nul') });
    expect(result).toMatchObject({ status: 202, responseSnippet: 'ok\uFFFDdone', error: null });
  });

  it('when the certificate is not trusted (no ca), then tls_error', async () => {
    const { ca: _omit, ...options } = base();
    const result = await sendDelivery({ ...options, url: urlOf('/ok') });
    expect(result).toMatchObject({ status: null, error: 'tls_error' });
    expect(received).toHaveLength(0);
  });

  it('when nothing listens on the port, then connection_refused', async () => {
    const closed = http.createServer();
    const port = await listen(closed);
    await shut(closed);
    const result = await sendDelivery({ ...base(), url: `https://127.0.0.1:${port}/` });
    expect(result).toMatchObject({ status: null, error: 'connection_refused' });
  });

  it('when allowLoopbackHttp is off, then 127.0.0.1 is refused before any connection', async () => {
    const before = secureConnections;
    const result = await sendDelivery({ ...base(), allowLoopbackHttp: false, url: urlOf('/ok') });
    expect(result).toMatchObject({
      status: null,
      error: 'url_resolves_to_forbidden_address',
      responseSnippet: '',
    });
    expect(secureConnections).toBe(before);
    expect(received).toHaveLength(0);
  });

  it('when the URL is refused, then the error is a code and never the URL or its query', async () => {
    const result = await sendDelivery({ ...base(), url: 'https://user:pw@example.com/?token=abc' });
    expect(result.error).toBe('url_credentials_not_allowed');
  });

  it('when a header value is not valid HTTP, then invalid_request and nothing is sent', async () => {
    const result = await sendDelivery({
      ...base(),
      headers: { 'x-bad': 'a\r\nx-injected: 1' },
      url: urlOf('/ok'),
    });
    expect(result).toMatchObject({ status: null, error: 'invalid_request' });
    expect(received).toHaveLength(0);
  });

  it('when the endpoint is http on loopback, then it is sent only with allowLoopbackHttp', async () => {
    const url = `http://127.0.0.1:${plainPort}/ok`;
    expect(await sendDelivery({ ...base(), url })).toMatchObject({ status: 200, error: null });
    expect(await sendDelivery({ ...base(), allowLoopbackHttp: false, url })).toMatchObject({
      status: null,
      error: 'url_scheme_not_allowed',
    });
    expect(received).toHaveLength(1);
  });

  it('when DNS changes after the check, then the connection still goes to the checked address', async () => {
    const resolve = scriptedResolver(
      [{ address: '127.0.0.1', family: 4 }],
      [{ address: '10.0.0.1', family: 4 }],
    );
    const url = `https://hooks.example.test:${receiverPort}/ok`;
    // hooks.example.test exists nowhere: only the pinned lookup can connect it, and TLS verifies its name (SNI).
    const first = await sendDelivery({ ...base(), url, resolve });
    expect(first).toMatchObject({ status: 200, error: null });
    expect(resolve.calls).toEqual(['hooks.example.test']);
    expect(received[0]?.headers.host).toBe(`hooks.example.test:${receiverPort}`);
    // The next send re-checks and sees the new, private answer.
    const second = await sendDelivery({ ...base(), url, resolve });
    expect(second).toMatchObject({ status: null, error: 'url_resolves_to_forbidden_address' });
    expect(resolve.calls).toHaveLength(2);
    expect(received).toHaveLength(1);
  });

  it('when the request is built, then its lookup answers with the checked address, never asking DNS again', async () => {
    const resolve = scriptedResolver(
      [{ address: '93.184.216.34', family: 4 }],
      [{ address: '10.0.0.1', family: 4 }],
    );
    const checked = await checkDeliveryUrl('https://hooks.example.com/in?x=1', {
      allowLoopbackHttp: false,
      resolve,
    });
    const options = deliveryRequestOptions(checked, { 'X-Svc-Signature': 'v1,abc', Host: 'evil' }, '{}');
    expect(options).toMatchObject({
      method: 'POST',
      hostname: 'hooks.example.com',
      servername: 'hooks.example.com',
      path: '/in?x=1',
    });
    expect(options.headers).toEqual({
      'x-svc-signature': 'v1,abc',
      'content-type': 'application/json',
      'user-agent': DELIVERY_USER_AGENT,
      'content-length': '2',
    });
    const lookup = options.lookup;
    if (!lookup) throw new Error('no pinned lookup');
    const single = await new Promise<unknown[]>((done) =>
      lookup('hooks.example.com', {}, (err, address, family) => done([err, address, family])),
    );
    expect(single).toEqual([null, '93.184.216.34', 4]);
    const all = await new Promise<unknown[]>((done) =>
      lookup('anything.example.com', { all: true }, (err, address) => done([err, address])),
    );
    expect(all).toEqual([null, [{ address: '93.184.216.34', family: 4 }]]);
    expect(resolve.calls).toHaveLength(1);
    // A fresh check sees the changed answer and refuses it.
    expect(await refusal('https://hooks.example.com/', false, resolve)).toBe(
      'url_resolves_to_forbidden_address',
    );
  });

  it('when an IP literal is the host, then no SNI name is sent and the certificate is matched on the IP', async () => {
    const checked = await checkDeliveryUrl('https://[2606:4700:4700::1111]:8443/x', {
      allowLoopbackHttp: false,
    });
    const options = deliveryRequestOptions(checked, {}, '');
    expect(options.hostname).toBe('2606:4700:4700::1111');
    expect(options.port).toBe(8443);
    expect(options.servername).toBeUndefined();
  });

  it('when two deliveries go to one endpoint, then the keep-alive connection is reused', async () => {
    const pool = new DeliveryAgentPool();
    try {
      const before = secureConnections;
      expect(await sendDelivery({ ...base(), agents: pool, url: urlOf('/ok') })).toMatchObject({
        status: 200,
      });
      await new Promise((resolve) => setImmediate(resolve));
      expect(await sendDelivery({ ...base(), agents: pool, url: urlOf('/ok') })).toMatchObject({
        status: 200,
      });
      expect(secureConnections - before).toBe(1);
      expect(pool.size).toBe(1);
    } finally {
      pool.close();
    }
  });
});

describe('DeliveryAgentPool', () => {
  it('when more endpoints than the bound are used, then the least recently used agent is evicted', () => {
    const pool = new DeliveryAgentPool({ maxAgents: 2 });
    try {
      const a = pool.agentFor('a', true);
      const b = pool.agentFor('b', true);
      expect(pool.agentFor('a', true)).toBe(a);
      pool.agentFor('c', false);
      expect(pool.size).toBe(2);
      expect(pool.agentFor('a', true)).toBe(a);
      expect(pool.agentFor('b', true)).not.toBe(b);
      expect(pool.agentFor('b', true)).toBeInstanceOf(https.Agent);
    } finally {
      pool.close();
    }
  });
});

describe('parseRetryAfter', () => {
  const now = Date.parse('2026-01-01T00:00:00Z');

  it.each([
    ['120', 120_000],
    ['0', 0],
    [' 7 ', 7_000],
    ['999999999', 24 * 60 * 60 * 1000],
    ['Thu, 01 Jan 2026 00:01:30 GMT', 90_000],
    ['Wed, 31 Dec 2025 23:00:00 GMT', 0],
    ['Sat, 10 Jan 2026 00:00:00 GMT', 24 * 60 * 60 * 1000],
    ['soon', null],
    ['-5', null],
    ['1.5', null],
    ['', null],
    [undefined, null],
  ])('when Retry-After is %j, then %j ms', (value, expected) => {
    expect(parseRetryAfter(value, now)).toBe(expected);
  });
});

describe('networkErrorCode', () => {
  it.each([
    [{ code: 'ECONNREFUSED' }, 'connection_refused'],
    [{ code: 'DEPTH_ZERO_SELF_SIGNED_CERT' }, 'tls_error'],
    [{ code: 'ERR_TLS_CERT_ALTNAME_INVALID' }, 'tls_error'],
    [{ code: 'ERR_SSL_WRONG_VERSION_NUMBER' }, 'tls_error'],
    [{ code: 'ECONNRESET' }, 'connection_reset'],
    [{ code: 'HPE_INVALID_CONSTANT' }, 'invalid_response'],
    [{ code: 'EHOSTUNREACH' }, 'host_unreachable'],
    [new Error('connect to https://x/?token=abc failed'), 'network_error'],
  ])('when the error is %j, then %s', (error, code) => {
    expect(networkErrorCode(error)).toBe(code);
  });
});
