/**
 * Scope catalog, presets and matching.
 *
 * Matching is exact string equality. There is no wildcard and no implication between scopes:
 * `projects:write` does not imply `projects:read`, and no broad key ever implies `artifact-schemas:*`
 * (spec, "Workflow scopes": broad legacy read/write keys do not grant artifact-schema access).
 */

/** Scopes of the Workflow API (spec, "Workflow scopes"). */
export const WORKFLOW_SCOPES = [
  'workflow-contracts:read',
  'workflow-contracts:write',
  'workflows:run',
  'workflows:read',
  'workflow-artifacts:read',
  'workflow-artifacts:write',
  'artifact-schemas:read',
  'artifact-schemas:write',
  'workflow-delivery:manage',
] as const;

/** Scopes of the hub API. `contract:read` grants only the integration contract document. */
export const HUB_SCOPES = [
  'contract:read',
  'workspaces:read',
  'projects:read',
  'projects:write',
  'teams:read',
  'teams:write',
  'agents:read',
  'agents:write',
  'agents:spawn',
  'handoffs:read',
  'handoffs:write',
  'runtime-config:read',
  'runtime-hosts:write',
  'repos:read',
  'repos:write',
  'messages:write',
  'audit:read',
  'api-keys:read',
  'api-keys:write',
  'admin:workspace',
  'admin:tunnels',
  'workflows:approve',
] as const;

export const ALL_SCOPES = [...HUB_SCOPES, ...WORKFLOW_SCOPES] as const;

export type WorkflowScope = (typeof WORKFLOW_SCOPES)[number];
export type HubScope = (typeof HUB_SCOPES)[number];
export type Scope = (typeof ALL_SCOPES)[number];

const SCOPE_SET: ReadonlySet<string> = new Set<string>(ALL_SCOPES);

export function isScope(s: unknown): s is Scope {
  return typeof s === 'string' && SCOPE_SET.has(s);
}

/** Longest representation of an offending entry that `parseScopes` reports back. */
const MAX_REPORTED_LENGTH = 64;

function describeEntry(value: unknown): string {
  const text = typeof value === 'string' ? value : (JSON.stringify(value) ?? typeof value);
  return text.length > MAX_REPORTED_LENGTH ? `${text.slice(0, MAX_REPORTED_LENGTH)}…` : text;
}

/**
 * Validates a scope list from untrusted input (API-key creation body, token claim).
 * Accepts an array of strings, or one space-separated string (the OAuth `scope` claim form).
 * On success the scopes are deduplicated and sorted; otherwise every entry that is not a known scope
 * is reported (non-string entries in a JSON-ish form, truncated).
 */
export function parseScopes(list: unknown): { scopes: Scope[] } | { unknown: string[] } {
  let entries: unknown[];
  if (Array.isArray(list)) {
    entries = list;
  } else if (typeof list === 'string') {
    entries = list.split(' ').filter((part) => part !== '');
  } else {
    return { unknown: [describeEntry(list)] };
  }
  const scopes = new Set<Scope>();
  const unknown = new Set<string>();
  for (const entry of entries) {
    if (isScope(entry)) {
      scopes.add(entry);
    } else {
      unknown.add(describeEntry(entry));
    }
  }
  if (unknown.size > 0) {
    return { unknown: [...unknown] };
  }
  return { scopes: [...scopes].sort() };
}

/**
 * Returns the required scopes that are not granted, in the order they were required, without duplicates.
 * Exact matching only (see the module comment).
 */
export function missingScopes(granted: readonly string[], required: readonly string[]): string[] {
  const have = new Set(granted);
  const missing = new Set<string>();
  for (const scope of required) {
    if (!have.has(scope)) {
      missing.add(scope);
    }
  }
  return [...missing];
}

export const SCOPE_PRESET_NAMES = ['read-only', 'automation', 'agent-runtime'] as const;
export type ScopePreset = (typeof SCOPE_PRESET_NAMES)[number];

export function isScopePreset(value: unknown): value is ScopePreset {
  return typeof value === 'string' && (SCOPE_PRESET_NAMES as readonly string[]).includes(value);
}

/**
 * Destructive or privileged scopes (spec, "Scope families": `*:delete`, `*:approve`, secrets, `admin:*`).
 * They are never part of a preset: a key that needs one must name it explicitly, and should be a separate
 * key with a named owner and a rotation plan.
 */
export const DESTRUCTIVE_SCOPES = [
  'artifact-schemas:write',
  'admin:workspace',
  'admin:tunnels',
  'api-keys:write',
  'workflow-delivery:manage',
  'workflows:approve',
] as const satisfies readonly Scope[];

/**
 * Read scopes that are deliberately left out of the read-only preset:
 * - `artifact-schemas:read`: artifact-schema access is never granted by a broad key.
 * - `runtime-config:read`: the runtime config carries the relay token and a workspace API key, so it is
 *   a secret-bearing read for runtime hosts (agent-runtime preset), not an observer read.
 */
const READ_ONLY_EXCLUDED: ReadonlySet<Scope> = new Set<Scope>([
  'artifact-schemas:read',
  'runtime-config:read',
]);

/** Every `*:read` scope (which includes `contract:read`) except the exclusions above. */
const READ_ONLY: readonly Scope[] = ALL_SCOPES.filter(
  (scope) => scope.endsWith(':read') && !READ_ONLY_EXCLUDED.has(scope),
);

const freeze = (scopes: readonly Scope[]): readonly Scope[] => Object.freeze([...new Set(scopes)].sort());

export const SCOPE_PRESETS: Readonly<Record<ScopePreset, readonly Scope[]>> = Object.freeze({
  'read-only': freeze(READ_ONLY),
  automation: freeze([
    ...READ_ONLY,
    'projects:write',
    'teams:write',
    'handoffs:write',
    'workflow-contracts:write',
    'workflows:run',
    'workflow-artifacts:write',
  ]),
  'agent-runtime': freeze([
    'contract:read',
    'agents:read',
    'agents:write',
    'agents:spawn',
    'runtime-config:read',
    'runtime-hosts:write',
    'handoffs:read',
    'handoffs:write',
    'messages:write',
    'workflows:read',
  ]),
});

/**
 * What a live agent's token (`AGENT_TOKEN`) may do: read and act on its own work, message peers, report on
 * workflows. Agent-scoped routes act on the agent itself only; the scopes never reach other agents' data.
 */
export const AGENT_TOKEN_SCOPES: readonly Scope[] = Object.freeze([
  'agents:read',
  'agents:write',
  'handoffs:read',
  'handoffs:write',
  'messages:write',
  'workflows:read',
  'workflow-artifacts:write',
] as Scope[]);
