// The proxies bench/console-router.mjs measures the router against, each started on a free 127.0.0.1 port in
// front of the upstream and checked to answer its body: nginx (a config generated in the bench's temp dir),
// configurable-http-proxy (its route added through its REST API) and the Node byte pipe (`--node-floor`).
import { randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { writeFileSync } from 'node:fs';
import { testing } from '../harness/cli.mjs';
import { startTool, waitForAnswer } from '../harness/stack.mjs';
import { ROUTE } from './stub-hub.mjs';

/**
 * The Node floor (`--node-floor`), run as `node -e <script> <port> <upstream port>`: one upstream connection per
 * client connection, bytes piped both ways, nothing parsed; either side closing closes the other.
 */
const NODE_PIPE_SCRIPT = `
const net = require('node:net');
const [port, upstreamPort] = process.argv.slice(1).map(Number);
const server = net.createServer((client) => {
  const upstream = net.connect(upstreamPort, '127.0.0.1');
  client.setNoDelay(true);
  upstream.setNoDelay(true);
  client.pipe(upstream);
  upstream.pipe(client);
  client.on('error', () => upstream.destroy());
  upstream.on('error', () => client.destroy());
  client.on('close', () => upstream.destroy());
  upstream.on('close', () => client.destroy());
});
server.listen(port, '127.0.0.1');
process.on('SIGTERM', () => process.exit(0));
`;
function nginxConfig({ dir, port, upstreamPort, workers }) {
  // Temp files, pid and logs stay in the bench's temp dir; as root the workers keep the master's user so they
  // can use it (the bench runs on loopback only).
  const user = process.getuid?.() === 0 ? `user ${os.userInfo().username};\n` : '';
  return `${user}worker_processes ${workers};
pid ${dir}/nginx.pid;
error_log stderr warn;
events { worker_connections 4096; }
http {
  access_log off;
  client_body_temp_path ${dir}/client_body;
  proxy_temp_path ${dir}/proxy;
  fastcgi_temp_path ${dir}/fastcgi;
  uwsgi_temp_path ${dir}/uwsgi;
  scgi_temp_path ${dir}/scgi;
  # Node servers keep connections open without a request limit; nginx's default of 1000 would reconnect.
  keepalive_requests 1000000;
  upstream agent {
    server 127.0.0.1:${upstreamPort};
    keepalive 64;
    keepalive_requests 1000000;
  }
  map $http_upgrade $connection_upgrade {
    default upgrade;
    '' '';
  }
  server {
    listen 127.0.0.1:${port};
    location ${ROUTE}/ {
      proxy_pass http://agent/;
      proxy_http_version 1.1;
      proxy_set_header Host $host;
      proxy_set_header Upgrade $http_upgrade;
      proxy_set_header Connection $connection_upgrade;
      proxy_read_timeout 1h;
    }
  }
}
`;
}

/**
 * Starts a proxy with `start(port)` (a {@link startTool} process), stopped at tear-down; runs `prepare(proc)`,
 * then waits until it answers `check` (`{ path, body }`) at its URL.
 */
async function startProxy(teardown, check, start, prepare = async () => undefined) {
  const port = await testing().freePort();
  const proc = start(port);
  teardown.procs.push({ stop: () => proc.stop('SIGTERM', 10_000) });
  await prepare(proc);
  const url = `http://127.0.0.1:${port}`;
  await waitForAnswer(proc, `${url}${check.path}`, { body: check.body });
  return { proc, url };
}

/** nginx at `bin` with `workers` worker processes, its config and temp files in `dir`. */
export function startNginx(teardown, check, { bin, dir, upstreamPort, workers }) {
  return startProxy(teardown, check, (port) => {
    const conf = path.join(dir, 'nginx.conf');
    writeFileSync(conf, nginxConfig({ dir, port, upstreamPort, workers }));
    return startTool('nginx', bin, ['-p', dir, '-c', conf, '-e', 'stderr', '-g', 'daemon off;']);
  });
}

/** configurable-http-proxy at `bin`, its route to `upstreamUrl` added through its REST API and its token. */
export async function startChp(teardown, check, { bin, upstreamUrl }) {
  const apiPort = await testing().freePort();
  const token = randomBytes(24).toString('hex');
  const api = `http://127.0.0.1:${apiPort}/api/routes`;
  const start = (port) =>
    startTool(
      'configurable-http-proxy',
      bin,
      [
        ...[
          '--ip',
          '127.0.0.1',
          '--port',
          String(port),
          '--api-ip',
          '127.0.0.1',
          '--api-port',
          String(apiPort),
        ],
        ...['--no-include-prefix', '--log-level', 'warn'],
      ],
      { CONFIGPROXY_AUTH_TOKEN: token },
    );
  return startProxy(teardown, check, start, async (proc) => {
    await waitForAnswer(proc, api, { headers: { authorization: `token ${token}` } });
    const added = await fetch(`${api}${ROUTE}`, {
      method: 'POST',
      headers: { authorization: `token ${token}`, 'content-type': 'application/json' },
      body: JSON.stringify({ target: upstreamUrl }),
    });
    if (added.status !== 201)
      throw new Error(`configurable-http-proxy: adding the route answered ${added.status}`);
  });
}

/** The Node byte pipe (`--node-floor`) in front of the upstream. */
export function startNodePipe(teardown, check, { upstreamPort }) {
  return startProxy(teardown, check, (port) =>
    startTool('Node byte pipe', process.execPath, [
      '-e',
      NODE_PIPE_SCRIPT,
      String(port),
      String(upstreamPort),
    ]),
  );
}
