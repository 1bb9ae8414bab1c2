import { execFileSync } from 'node:child_process';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFileSync, writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { HAPROXY_CONFIG, renderHaproxyConfig, startLoadBalancer } from './load-balancer';
import type { RunningLoadBalancer } from './load-balancer';
import { eventually, freePort } from './process';

jest.setTimeout(60_000);

/** A replica that names itself in every answer and is ready until told otherwise. */
async function replica(
  name: string,
): Promise<{ server: Server; address: string; ready: { value: boolean }; checkHosts: string[] }> {
  const ready = { value: true };
  const checkHosts: string[] = [];
  const server = createServer((req, res) => {
    if (req.url === '/readyz') {
      checkHosts.push(req.headers.host ?? '');
      res.writeHead(ready.value ? 200 : 503).end();
      return;
    }
    res.writeHead(200, { 'content-type': 'text/plain' }).end(name);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, address: `127.0.0.1:${(server.address() as AddressInfo).port}`, ready, checkHosts };
}

describe('the load balancer configuration', () => {
  test('when rendered for two services, then HAProxy accepts it and a service not given is left out', () => {
    const text = renderHaproxyConfig(readFileSync(HAPROXY_CONFIG, 'utf8'), [
      { name: 'hub', bind: '127.0.0.1:1', servers: ['127.0.0.1:2', '127.0.0.1:3'] },
      { name: 'workflow', bind: '127.0.0.1:4', servers: ['127.0.0.1:5'] },
    ]);
    expect(text).toContain('server hub-2 127.0.0.1:3 check');
    // Fail open: the same replicas, unchecked, as backups (decision 110).
    expect(text).toContain('server hub-2-open 127.0.0.1:3 backup');
    expect(text).not.toMatch(/-open .* check/);
    const configured = text.split('\n').filter((line) => !line.trimStart().startsWith('#'));
    expect(configured.join('\n')).not.toMatch(/\{\{|console/);
    const dir = mkdtempSync(path.join(tmpdir(), 'svc-lb-check-'));
    try {
      writeFileSync(path.join(dir, 'haproxy.cfg'), text);
      expect(() =>
        execFileSync('haproxy', ['-c', '-q', '-f', path.join(dir, 'haproxy.cfg')], { stdio: 'pipe' }),
      ).not.toThrow();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('HAProxy in front of two replicas', () => {
  let a: Awaited<ReturnType<typeof replica>>;
  let b: Awaited<ReturnType<typeof replica>>;
  let lb: RunningLoadBalancer;
  beforeAll(async () => {
    [a, b] = await Promise.all([replica('a'), replica('b')]);
    lb = await startLoadBalancer([
      { name: 'hub', bind: `127.0.0.1:${await freePort()}`, servers: [a.address, b.address] },
    ]);
  });
  afterAll(async () => {
    await lb?.stop();
    a?.server.close();
    b?.server.close();
  });

  const names = async (count: number) => {
    const seen: string[] = [];
    for (let i = 0; i < count; i += 1) {
      const res = await fetch(`${lb.urls.hub!}/who`);
      seen.push(res.status === 200 ? await res.text() : `status ${res.status}`);
    }
    return seen;
  };

  test('when both are ready, then requests go to both in turn', async () => {
    const seen = await names(10);
    expect(seen.filter((n) => n === 'a').length).toBeGreaterThanOrEqual(4);
    expect(seen.filter((n) => n === 'b').length).toBeGreaterThanOrEqual(4);
  });

  test('when HAProxy checks a replica, then its check names a loopback Host (a console router refuses one without)', async () => {
    await eventually(() => a.checkHosts.length >= 2, 10_000, 'two health checks of replica a');
    expect(new Set(a.checkHosts)).toEqual(new Set(['localhost']));
  });

  test('when one answers 503 on /readyz, then it is taken out within two seconds and put back when ready', async () => {
    b.ready.value = false;
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(new Set(await names(10))).toEqual(new Set(['a']));
    b.ready.value = true;
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(new Set(await names(10))).toEqual(new Set(['a', 'b']));
  });

  test('when neither passes its check (every replica busy or not ready), then both keep getting requests, not a 503 each', async () => {
    // Every replica busy at once (decision 110): the checks fail on both, and the balancer fails open.
    a.ready.value = false;
    b.ready.value = false;
    try {
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      // Both checked servers are out: HAProxy says it runs on the backups.
      expect(lb.output()).toMatch(/Running on backup/);
      const seen = await names(10);
      expect(new Set(seen)).toEqual(new Set(['a', 'b']));
    } finally {
      a.ready.value = true;
      b.ready.value = true;
    }
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    expect(new Set(await names(10))).toEqual(new Set(['a', 'b']));
  });

  test('when one stops listening, then no request fails: a refused connection is sent to the other', async () => {
    await new Promise<void>((resolve) => {
      b.server.close(() => resolve());
      b.server.closeAllConnections();
    });
    const seen = await names(20);
    expect(new Set(seen)).toEqual(new Set(['a']));
  });
});
