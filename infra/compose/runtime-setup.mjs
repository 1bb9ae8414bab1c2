// The compose stack as the workspace's runtime host "compose" (infra/docker-compose.yml), in three modes:
//
//   node runtime-setup.mjs setup        one-shot `runtime-setup`: as the bootstrap owner, registers the host
//                                       (once) and pulls its runtime config, which mints the host's
//                                       agent-runtime key and returns its relay token (each pull rotates the
//                                       key). Writes relay.env, console-router.env and heartbeat.env.
//   node runtime-setup.mjs heartbeat    long-running `runtime-heartbeat`: every 10 s, what `svc runtime up`
//                                       reports on a runtime host: whether the relay and the console router
//                                       answer /readyz, with the host's key. The hub starts agents only on a
//                                       host with a fresh heartbeat whose relay and console router are ready.
//   node runtime-setup.mjs start-agent  one-shot `reference-agent-start`: registers the reference agent on the
//                                       host (once) and starts it (launch path "direct"), which issues its
//                                       AGENT_TOKEN and runtime credential. Writes reference-agent.env.
//
// Env files go to SETUP_DIR with mode 0600, owned by SETUP_OWNER (the services' uid). Each consumer sources
// its file before it starts. Nothing secret is printed; any failure is one line and exit 1.
import { chmodSync, chownSync, mkdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import path from 'node:path';

const env = process.env;
const mode = process.argv[2] ?? 'setup';

function fail(message) {
  process.stderr.write(`runtime-setup ${mode}: ${message}\n`);
  process.exit(1);
}
function say(message) {
  process.stdout.write(`runtime-setup ${mode}: ${message}\n`);
}
const required = (name) => env[name] || fail(`${name} is not set`);

const hubUrl = required('HUB_URL').replace(/\/+$/, '');
const setupDir = required('SETUP_DIR');
const hostName = env.RUNTIME_HOST_NAME || 'compose';
const workdirRoot = '/var/lib/svc/agents';
const [ownerUid, ownerGid] = (env.SETUP_OWNER || '1000:1000').split(':').map(Number);
const giveAway = (target) => {
  if (process.getuid?.() === 0) chownSync(target, ownerUid, ownerGid);
};

/** `token` is a participant session (Bearer); `apiKey` a workspace API key (x-api-key). */
async function call(method, route, { token, apiKey, body, query } = {}) {
  const url = new URL(hubUrl + route);
  for (const [key, value] of Object.entries(query ?? {})) url.searchParams.set(key, value);
  let response;
  try {
    response = await fetch(url, {
      method,
      headers: {
        accept: 'application/json',
        ...(body ? { 'content-type': 'application/json' } : {}),
        ...(token ? { authorization: `Bearer ${token}` } : {}),
        ...(apiKey ? { 'x-api-key': apiKey } : {}),
      },
      body: body ? JSON.stringify(body) : undefined,
      signal: AbortSignal.timeout(15_000),
    });
  } catch {
    fail(`${method} ${route}: the hub at ${hubUrl} is unreachable`);
  }
  const payload = await response.json().catch(() => ({}));
  if (!response.ok)
    fail(`${method} ${route}: ${response.status} ${payload.code ?? payload.title ?? ''}`.trim());
  return payload.data ?? payload;
}

function writeEnv(file, values) {
  mkdirSync(setupDir, { recursive: true, mode: 0o700 });
  giveAway(setupDir);
  const target = path.join(setupDir, file);
  const text = Object.entries(values)
    .map(([key, value]) => `${key}='${String(value).replace(/'/g, `'\\''`)}'`)
    .join('\n');
  writeFileSync(target, `${text}\n`, { mode: 0o600 });
  chmodSync(target, 0o600);
  giveAway(target);
  say(`wrote ${target} (${Object.keys(values).join(', ')})`);
}

function readEnv(file) {
  const values = {};
  const text = readFileSync(path.join(setupDir, file), 'utf8');
  for (const line of text.split('\n')) {
    const match = /^([A-Z0-9_]+)='(.*)'$/.exec(line);
    if (match) values[match[1]] = match[2].replace(/'\\''/g, "'");
  }
  return values;
}

async function ownerSession() {
  const session = await call('POST', '/api/v1/auth/login', {
    body: { email: required('BOOTSTRAP_ADMIN_EMAIL'), password: required('BOOTSTRAP_ADMIN_PASSWORD') },
  });
  return session.token;
}

const listOf = (answer) => (Array.isArray(answer) ? answer : (answer.items ?? []));

async function setup() {
  const workspace = required('BOOTSTRAP_WORKSPACE_SLUG');
  const ws = encodeURIComponent(workspace);
  const token = await ownerSession();
  let host = listOf(await call('GET', `/api/v1/workspaces/${ws}/runtime-hosts`, { token })).find(
    (h) => h.name === hostName,
  );
  if (!host) {
    // No relay_public_url: the hub accepts only https there (http for localhost), and the compose relay is
    // reachable only as http://relay:8787. Agents are started directly (reference-agent-start).
    host = (
      await call('POST', `/api/v1/workspaces/${ws}/runtime-hosts`, {
        token,
        body: {
          name: hostName,
          hostname: hostName,
          workdir_root: workdirRoot,
          console_public_base_url: required('CONSOLE_PUBLIC_URL'),
          relay: { bind_host: '0.0.0.0', listen_port: 8787 },
          console_router: { bind_host: '0.0.0.0', listen_port: 8790 },
        },
      })
    ).host;
    say(`registered runtime host ${host.id}`);
  } else say(`runtime host ${host.id} exists`);
  const config = await call('GET', `/api/v1/workspaces/${ws}/infrastructure/runtime-config`, {
    token,
    query: { runtime_instance_id: host.id },
  });
  say('pulled the runtime config (a new host key)');
  writeEnv('relay.env', {
    SVC_WORKSPACE: config.workspace?.slug ?? workspace,
    SVC_WORKSPACE_API_KEY: config.auth.workspace_api_key,
    SVC_RELAY_TOKEN: config.auth.relay_token,
  });
  // The host's console secret (agents' console proxy keys derive from it): kept across runs.
  let upstreamSecret;
  try {
    upstreamSecret = readEnv('console-router.env').CONSOLE_ROUTER_UPSTREAM_SECRET;
  } catch {
    // First run.
  }
  writeEnv('console-router.env', {
    SVC_RUNTIME_INSTANCE_ID: host.id,
    SVC_WORKSPACE_API_KEY: config.auth.workspace_api_key,
    CONSOLE_ROUTER_UPSTREAM_SECRET: upstreamSecret || randomBytes(32).toString('base64url'),
  });
  writeEnv('heartbeat.env', {
    SVC_RUNTIME_INSTANCE_ID: host.id,
    SVC_WORKSPACE_API_KEY: config.auth.workspace_api_key,
  });
}

async function ready(url) {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(3_000) });
    return response.ok;
  } catch {
    return false;
  }
}

async function heartbeat() {
  const { SVC_RUNTIME_INSTANCE_ID: hostId, SVC_WORKSPACE_API_KEY: key } = readEnv('heartbeat.env');
  let version = 'compose';
  try {
    version = JSON.parse(readFileSync('/app/package.json', 'utf8')).version ?? version;
  } catch {
    // Outside the svc-cli image.
  }
  const relayUrl = env.RELAY_READYZ_URL || 'http://relay:8787/readyz';
  const consoleUrl = env.CONSOLE_ROUTER_READYZ_URL || 'http://console-router:8790/readyz';
  // The compose healthcheck reads the age of this file: healthy while heartbeats are accepted.
  const beatFile = path.join(env.HEARTBEAT_STATE_DIR || '/tmp', 'last-heartbeat');
  let last = '';
  for (;;) {
    const body = {
      relay_ready: await ready(relayUrl),
      console_router_ready: await ready(consoleUrl),
      runtime_version: String(version).slice(0, 64),
    };
    const answer = await fetch(`${hubUrl}/api/v1/runtime-hosts/${encodeURIComponent(hostId)}/heartbeat`, {
      method: 'POST',
      headers: { accept: 'application/json', 'content-type': 'application/json', 'x-api-key': key },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(10_000),
    }).then(
      async (response) => ({
        ok: response.ok,
        status: response.status,
        code: (await response.json().catch(() => ({}))).code,
      }),
      () => ({ ok: false, status: 0, code: 'hub_unreachable' }),
    );
    // A refused key is final (a newer setup run rotated it: restart this service); anything else is retried.
    if (answer.status === 401) fail('the hub refused the host key (401); run runtime-setup again');
    const state = answer.ok
      ? `relay ready ${body.relay_ready}, console router ready ${body.console_router_ready}`
      : `heartbeat not accepted (${answer.status} ${answer.code ?? ''})`;
    if (state !== last) say(`host ${hostId}: ${state}`);
    last = state;
    if (answer.ok && body.relay_ready && body.console_router_ready) {
      writeFileSync(beatFile, '');
      const now = new Date();
      utimesSync(beatFile, now, now);
    }
    await new Promise((resolve) => setTimeout(resolve, 10_000));
  }
}

async function startAgent() {
  const workspace = required('BOOTSTRAP_WORKSPACE_SLUG');
  const ws = encodeURIComponent(workspace);
  const agentName = env.REFERENCE_AGENT_NAME || 'reference-agent';
  // An exact provider/model id from the hub's catalog; local/echo needs no provider credential.
  const model = env.REFERENCE_AGENT_MODEL || 'local/echo';
  const { SVC_RUNTIME_INSTANCE_ID: hostId } = readEnv('heartbeat.env');
  const token = await ownerSession();
  let agent = listOf(await call('GET', `/api/v1/workspaces/${ws}/agents`, { token })).find(
    (a) => a.name === agentName,
  );
  if (!agent) {
    const capabilities = (env.REFERENCE_AGENT_CAPABILITIES ?? '')
      .split(',')
      .map((c) => c.trim())
      .filter(Boolean);
    agent = await call('POST', `/api/v1/workspaces/${ws}/agents`, {
      token,
      body: {
        name: agentName,
        runtime_instance_id: hostId,
        workdir: `${workdirRoot}/${agentName}`,
        ...(capabilities.length > 0 ? { capabilities } : {}),
        model,
      },
    });
    say(`registered agent ${agent.id}`);
  }
  if (['online', 'idle', 'busy'].includes(agent.status)) {
    // The previous container of this agent is gone: this runs before every start of the agent service.
    await call('POST', `/api/v1/agents/${encodeURIComponent(agent.id)}/stop`, { token });
  }
  const started = await call('POST', `/api/v1/agents/${encodeURIComponent(agent.id)}/start`, {
    token,
    body: { launch_path: 'direct', model },
  });
  say(`started agent ${agent.id}`);
  if (env.AGENT_HOME_DIR) {
    mkdirSync(path.join(env.AGENT_HOME_DIR, agentName), { recursive: true, mode: 0o700 });
    giveAway(env.AGENT_HOME_DIR);
    giveAway(path.join(env.AGENT_HOME_DIR, agentName));
  }
  writeEnv('reference-agent.env', {
    AGENT_TOKEN: started.agent_token,
    AGENT_RUNTIME_CREDENTIAL: started.runtime_credential.token,
    AGENT_RUNTIME_CREDENTIAL_EXPIRES_AT: started.runtime_credential.expires_at,
  });
}

const modes = { setup, heartbeat, 'start-agent': startAgent };
if (!modes[mode]) fail(`unknown mode (one of ${Object.keys(modes).join(', ')})`);
await modes[mode]();
