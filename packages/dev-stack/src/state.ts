import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';

/** Secrets of the local stack, made once and kept in `.svc/dev-secrets.json` (0600). */
export interface DevSecrets {
  encryption_keys: string;
  service_token: string;
  relay_token: string;
  admin_password: string;
  /** The development host's console secret: the console router derives each agent's proxy key from it. */
  console_secret: string;
}

/** The file other tools read: exactly the documented shape. */
export interface DevStackFile {
  hub_url: string;
  workflow_url: string;
  relay_url: string;
  console_router_url: string;
  workspace: { id: string; slug: string };
  project: { id: string; code: string };
  participant: { email: string; password: string; token: string };
  api_keys: { read_only: string; automation: string; agent_runtime: string; workflow_all: string };
  /** The development console agent; `console_url` is its route on the console router. */
  agent: { id: string; name: string; console_url: string };
}

export function writePrivateJson(file: string, value: unknown): void {
  mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const temp = `${file}.${process.pid}.tmp`;
  writeFileSync(temp, `${JSON.stringify(value, null, 2)}\n`, { mode: 0o600 });
  renameSync(temp, file);
  chmodSync(file, 0o600);
}

export function readJson<T>(file: string): T | undefined {
  if (!existsSync(file)) return undefined;
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as T;
  } catch {
    return undefined;
  }
}

export function loadOrCreateSecrets(stateDir: string): DevSecrets {
  const file = path.join(stateDir, 'dev-secrets.json');
  const existing = readJson<Partial<DevSecrets>>(file);
  const consoleSecret = () => randomBytes(32).toString('base64url');
  if (
    existing?.encryption_keys &&
    existing.service_token &&
    existing.relay_token &&
    existing.admin_password
  ) {
    if (existing.console_secret) return existing as DevSecrets;
    // A file from before the console secret existed: add it, keep everything else (the databases depend on it).
    const upgraded = { ...existing, console_secret: consoleSecret() } as DevSecrets;
    writePrivateJson(file, upgraded);
    return upgraded;
  }
  const secrets: DevSecrets = {
    encryption_keys: `dev1:${randomBytes(32).toString('base64')}`,
    service_token: `svs_${randomBytes(32).toString('base64url')}`,
    relay_token: `rly_${randomBytes(32).toString('base64url')}`,
    admin_password: `dev-${randomBytes(12).toString('base64url')}`,
    console_secret: consoleSecret(),
  };
  writePrivateJson(file, secrets);
  return secrets;
}
