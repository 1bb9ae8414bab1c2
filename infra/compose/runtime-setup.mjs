// One-shot setup of the compose runtime host (service `runtime-setup` in infra/docker-compose.yml).
//
// After hub-bootstrap has created the workspace and its owner, this script, as that owner:
//   1. registers the runtime host "compose" (relay http://relay:8787, console router on 8790) unless it exists;
//   2. pulls the host's runtime config, which mints the host's agent-runtime API key and returns its relay
//      token (each pull rotates the key, so the relay and the console router always get a working one);
//   3. registers the agent "reference-agent" on that host unless it exists, and starts it (launch path
//      "direct"), which issues its AGENT_TOKEN and runtime credential;
//   4. writes one env file per consumer into SETUP_DIR (mode 0600): relay.env, console-router.env,
//      reference-agent.env. The consumers source their file before they start.
// It prints one line per step and never a secret. Exit 1 with one line on any failure.
import { chmodSync, chownSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';

const env = process.env;
const required = (name) => {
  const value = env[name];
  if (!value) fail(`${name} is not set`);
  return value;
};
function fail(message) {
  process.stderr.write(`runtime-setup: ${message}\n`);
  process.exit(1);
}

const hubUrl = required('HUB_URL').replace(/\/+$/, '');
const workspace = required('BOOTSTRAP_WORKSPACE_SLUG');
const email = required('BOOTSTRAP_ADMIN_EMAIL');
const password = required('BOOTSTRAP_ADMIN_PASSWORD');
const setupDir = required('SETUP_DIR');
const hostName = env.RUNTIME_HOST_NAME || 'compose';
const agentName = env.REFERENCE_AGENT_NAME || 'reference-agent';
const consolePublicBaseUrl = required('CONSOLE_PUBLIC_URL');
const workdirRoot = '/var/lib/svc/agents';
// uid:gid the consuming services run as (the images' "node" user); files and the agent home get it.
const [ownerUid, ownerGid] = (env.SETUP_OWNER || '1000:1000').split(':').map(Number);
const giveAway = (target) => {
  if (process.getuid?.() === 0) chownSync(target, ownerUid, ownerGid);
};

async function call(method, route, { token, body, query } = {}) {
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
      },
      body: body ? JSON.stringify(body) : undefined,
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
  const target = path.join(setupDir, file);
  const text = Object.entries(values)
    .map(([key, value]) => `${key}='${String(value).replace(/'/g, `'\\''`)}'`)
    .join('\n');
  writeFileSync(target, `${text}\n`, { mode: 0o600 });
  chmodSync(target, 0o600);
  giveAway(target);
  process.stdout.write(`runtime-setup: wrote ${target} (${Object.keys(values).join(', ')})\n`);
}

const session = await call('POST', '/api/v1/auth/login', { body: { email, password } });
const token = session.token;
const ws = encodeURIComponent(workspace);

const hosts = await call('GET', `/api/v1/workspaces/${ws}/runtime-hosts`, { token });
let host = (Array.isArray(hosts) ? hosts : (hosts.items ?? [])).find((h) => h.name === hostName);
if (!host) {
  const created = await call('POST', `/api/v1/workspaces/${ws}/runtime-hosts`, {
    token,
    body: {
      name: hostName,
      hostname: hostName,
      workdir_root: workdirRoot,
      console_public_base_url: consolePublicBaseUrl,
      relay_public_url: 'http://relay:8787',
      relay: { bind_host: '0.0.0.0', listen_port: 8787 },
      console_router: { bind_host: '0.0.0.0', listen_port: 8790 },
    },
  });
  host = created.host;
  process.stdout.write(`runtime-setup: registered runtime host ${host.id}\n`);
} else process.stdout.write(`runtime-setup: runtime host ${host.id} exists\n`);

const config = await call('GET', `/api/v1/workspaces/${ws}/infrastructure/runtime-config`, {
  token,
  query: { runtime_instance_id: host.id },
});
process.stdout.write('runtime-setup: pulled the runtime config (new host key)\n');

const agents = await call('GET', `/api/v1/workspaces/${ws}/agents`, { token });
let agent = (Array.isArray(agents) ? agents : (agents.items ?? [])).find((a) => a.name === agentName);
if (!agent) {
  agent = await call('POST', `/api/v1/workspaces/${ws}/agents`, {
    token,
    body: {
      name: agentName,
      runtime_instance_id: host.id,
      workdir: `${workdirRoot}/${agentName}`,
      ...(env.REFERENCE_AGENT_CAPABILITIES
        ? {
            capabilities: env.REFERENCE_AGENT_CAPABILITIES.split(',')
              .map((c) => c.trim())
              .filter(Boolean),
          }
        : {}),
      ...(env.REFERENCE_AGENT_MODEL ? { model: env.REFERENCE_AGENT_MODEL } : {}),
    },
  });
  process.stdout.write(`runtime-setup: registered agent ${agent.id}\n`);
}
if (['online', 'idle', 'busy'].includes(agent.status)) {
  // A previous container of the agent is gone (this runs before every start of the agent service).
  await call('POST', `/api/v1/agents/${encodeURIComponent(agent.id)}/stop`, { token });
}
const started = await call('POST', `/api/v1/agents/${encodeURIComponent(agent.id)}/start`, {
  token,
  body: { launch_path: 'direct' },
});
process.stdout.write(`runtime-setup: started agent ${agent.id}\n`);

mkdirSync(setupDir, { recursive: true, mode: 0o700 });
giveAway(setupDir);
if (env.AGENT_HOME_DIR) {
  mkdirSync(path.join(env.AGENT_HOME_DIR, agentName), { recursive: true, mode: 0o700 });
  giveAway(env.AGENT_HOME_DIR);
  giveAway(path.join(env.AGENT_HOME_DIR, agentName));
}
writeEnv('relay.env', {
  SVC_WORKSPACE: config.workspace?.slug ?? workspace,
  SVC_WORKSPACE_API_KEY: config.auth.workspace_api_key,
  SVC_RELAY_TOKEN: config.auth.relay_token,
});
writeEnv('console-router.env', {
  SVC_RUNTIME_INSTANCE_ID: host.id,
  SVC_WORKSPACE_API_KEY: config.auth.workspace_api_key,
});
writeEnv('reference-agent.env', {
  AGENT_TOKEN: started.agent_token,
  AGENT_RUNTIME_CREDENTIAL: started.runtime_credential.token,
  AGENT_RUNTIME_CREDENTIAL_EXPIRES_AT: started.runtime_credential.expires_at,
});
