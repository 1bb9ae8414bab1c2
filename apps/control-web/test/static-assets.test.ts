import { readdirSync, readFileSync } from 'node:fs';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { brotliDecompressSync, gunzipSync } from 'node:zlib';
import { createLogger } from '@svc/service-kit';
import { createControlWebService } from '../src/app';
import { controlWebEnvSchema } from '../src/env';

/**
 * The built page as the server sends it (`pnpm --filter @svc/control-web build` first): every script and
 * style was precompressed at build time and goes as brotli or gzip, whichever the browser prefers, with
 * `Vary: Accept-Encoding` and a year of immutable caching; the page itself is revalidated on every use.
 */
const publicDir = path.resolve(__dirname, '..', 'dist', 'public');
const assets = readdirSync(path.join(publicDir, 'assets'));
const scripts = assets.filter((name) => name.endsWith('.js'));

let server: Server;
let base: string;

beforeAll(async () => {
  const config = controlWebEnvSchema.parse({
    CONTROL_WEB_HUB_URL: 'http://127.0.0.1:9',
    CONTROL_WEB_WORKFLOW_URL: 'http://127.0.0.1:9',
    CONTROL_WEB_SESSION_KEYS: `k1:${Buffer.alloc(32, 7).toString('base64')}`,
    CONTROL_WEB_STATIC_DIR: publicDir,
  });
  const { app } = createControlWebService({
    config,
    logger: createLogger({ name: 'test', level: 'silent' }),
  });
  server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

/** A raw GET (Node's fetch would decode the body and hide the encoding). */
async function get(pathname: string, acceptEncoding?: string) {
  const { request } = await import('node:http');
  return new Promise<{
    status: number;
    headers: Record<string, string | string[] | undefined>;
    body: Buffer;
  }>((resolve, reject) => {
    const req = request(
      `${base}${pathname}`,
      {
        headers: {
          accept: 'text/html,*/*',
          ...(acceptEncoding ? { 'accept-encoding': acceptEncoding } : {}),
        },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () =>
          resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }),
        );
      },
    );
    req.on('error', reject);
    req.end();
  });
}

describe('static assets', () => {
  test('when the build ran, then every script and style has a brotli and a gzip copy beside it, each smaller', () => {
    expect(scripts.length).toBeGreaterThan(0);
    for (const name of assets.filter((n) => /\.(js|css)$/.test(n))) {
      const size = readFileSync(path.join(publicDir, 'assets', name)).length;
      if (size < 1024) continue;
      expect(assets).toEqual(expect.arrayContaining([`${name}.br`, `${name}.gz`]));
      expect(readFileSync(path.join(publicDir, 'assets', `${name}.br`)).length).toBeLessThan(size);
    }
  });

  test('when a browser accepts brotli, then a script goes as brotli with its type, Vary and immutable caching', async () => {
    const name = scripts[0]!;
    const original = readFileSync(path.join(publicDir, 'assets', name));
    const answer = await get(`/assets/${name}`, 'gzip, deflate, br, zstd');
    expect(answer.status).toBe(200);
    expect(answer.headers['content-encoding']).toBe('br');
    expect(answer.headers['content-type']).toMatch(/^text\/javascript|^application\/javascript/);
    expect(answer.headers.vary).toMatch(/Accept-Encoding/i);
    expect(answer.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(Number(answer.headers['content-length'])).toBeLessThan(original.length);
    expect(brotliDecompressSync(answer.body).equals(original)).toBe(true);
  });

  test('when a browser accepts only gzip, or nothing, then it gets gzip, or the file as it is', async () => {
    const name = scripts[0]!;
    const original = readFileSync(path.join(publicDir, 'assets', name));
    const gzip = await get(`/assets/${name}`, 'gzip');
    expect(gzip.headers['content-encoding']).toBe('gzip');
    expect(gunzipSync(gzip.body).equals(original)).toBe(true);
    const plain = await get(`/assets/${name}`);
    expect(plain.headers['content-encoding']).toBeUndefined();
    expect(plain.headers.vary).toMatch(/Accept-Encoding/i);
    expect(plain.body.equals(original)).toBe(true);
  });

  test('when the page is asked for, then it is revalidated on every use and a client-side address gets it too', async () => {
    for (const pathname of ['/', '/w/dev/agents']) {
      const answer = await get(pathname, 'br, gzip');
      expect(answer.status).toBe(200);
      expect(answer.headers['content-type']).toMatch(/^text\/html/);
      expect(answer.headers['cache-control']).toBe('no-cache');
      expect(answer.body.length > 0).toBe(true);
    }
  });

  test('when a compressed copy, a missing asset or an odd name is asked for, then the answer is 404', async () => {
    const name = scripts[0]!;
    for (const pathname of [
      `/assets/${name}.br`,
      `/assets/${name}.gz`,
      '/assets/missing-abc123.js',
      '/assets/..%2findex.html',
    ]) {
      const answer = await get(pathname, 'br');
      expect({ pathname, status: answer.status }).toEqual({ pathname, status: 404 });
      expect(answer.headers['content-encoding']).toBeUndefined();
    }
  });
});
