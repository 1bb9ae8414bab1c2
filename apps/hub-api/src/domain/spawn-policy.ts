import { randomBytes } from 'node:crypto';
import type { SpawnPolicy } from '../generated/prisma/client';

/** The rules of a spawn policy, stored or default. */
export interface SpawnPolicyRules {
  enabled: boolean;
  allowedModels: string[];
  allowedCapabilities: string[];
  allowedCommandKeys: string[];
  maxRunningAgentsPerHost: number;
}

/** A workspace that never set a policy: spawning is off. */
export const DEFAULT_SPAWN_POLICY: Readonly<SpawnPolicyRules> = Object.freeze({
  enabled: false,
  allowedModels: [],
  allowedCapabilities: [],
  allowedCommandKeys: ['default'],
  maxRunningAgentsPerHost: 4,
});

/** The rules of a stored policy row, or the default when there is none. */
export function rulesOf(row: SpawnPolicy | null): SpawnPolicyRules {
  if (!row)
    return { ...DEFAULT_SPAWN_POLICY, allowedCommandKeys: [...DEFAULT_SPAWN_POLICY.allowedCommandKeys] };
  return {
    enabled: row.enabled,
    allowedModels: row.allowedModels,
    allowedCapabilities: row.allowedCapabilities,
    allowedCommandKeys: row.allowedCommandKeys,
    maxRunningAgentsPerHost: row.maxRunningAgentsPerHost,
  };
}

export const SPAWN_BLOCKER_CODES = [
  'spawn_policy_off',
  'spawn_model_not_allowed',
  'spawn_capability_not_allowed',
  'spawn_command_not_allowed',
  'spawn_no_ready_host',
  'spawn_host_at_limit',
  'spawn_host_busy',
] as const;
/** Blockers that pass with time (a spawn in progress ends, an agent stops): answered 429 with `Retry-After`. */
export const SPAWN_LIMIT_BLOCKER_CODES: readonly SpawnBlockerCode[] = [
  'spawn_host_at_limit',
  'spawn_host_busy',
];
/** When a spawn refused for a host's spawns in progress is worth asking for again. */
export const SPAWN_BUSY_RETRY_AFTER_SECONDS = 10;
/** When a spawn refused for hosts full of agents is worth asking for again. */
export const SPAWN_AT_LIMIT_RETRY_AFTER_SECONDS = 30;
export type SpawnBlockerCode = (typeof SPAWN_BLOCKER_CODES)[number];

/** A reason a spawn is refused, in the spec's blocker category "spawn policy", with what an operator does. */
export interface SpawnBlocker {
  code: SpawnBlockerCode;
  message: string;
  recommended_action: string;
  runtime_instance_ids: string[];
  /** For the limit blockers: seconds after which a spawn is worth asking for again. */
  retry_after_seconds?: number;
}

const POLICY_ENDPOINT =
  'PUT /api/v1/workspaces/{workspace}/spawn-policy (or the project override at /projects/{project}/spawn-policy)';

/** Keeps the first of each value, in order. */
export function uniqueInOrder(values: readonly string[]): string[] {
  return [...new Set(values)];
}

export interface SpawnAsk {
  /** The model asked for; absent means the policy's first model. */
  model?: string;
  capabilities: readonly string[];
  /** The command key asked for; absent means the policy's first command key. */
  commandKey?: string;
}

export interface SpawnPolicyVerdict {
  /** The model the spawn would use (null when the policy allows none). */
  model: string | null;
  commandKey: string;
  blockers: SpawnBlocker[];
}

/**
 * What the policy says about a spawn, before any host is looked at: every policy blocker that applies, in
 * the order an operator fixes them. `catalog` holds the identifiers of the active provider/model catalog: an
 * allowed model that left it cannot be the default.
 */
export function judgeSpawnAgainstPolicy(
  policy: SpawnPolicyRules,
  ask: SpawnAsk,
  catalog: ReadonlySet<string>,
): SpawnPolicyVerdict {
  const blockers: SpawnBlocker[] = [];
  if (!policy.enabled) {
    blockers.push({
      code: 'spawn_policy_off',
      message: 'Spawning agents is off for this project (the spawn policy is not enabled).',
      recommended_action: `A workspace owner or admin enables the spawn policy with ${POLICY_ENDPOINT}, listing the models and capabilities spawned agents may use.`,
      runtime_instance_ids: [],
    });
  }
  const model = ask.model ?? policy.allowedModels.find((candidate) => catalog.has(candidate)) ?? null;
  if (model === null) {
    blockers.push({
      code: 'spawn_model_not_allowed',
      message:
        policy.allowedModels.length === 0
          ? 'The spawn policy allows no model.'
          : `None of the models the spawn policy allows (${policy.allowedModels.join(', ')}) is in the current provider/model catalog.`,
      recommended_action: `A workspace owner or admin adds an exact identifier of the current catalog (GET /api/v1/provider-models) to allowed_models with ${POLICY_ENDPOINT}.`,
      runtime_instance_ids: [],
    });
  } else if (!policy.allowedModels.includes(model)) {
    blockers.push({
      code: 'spawn_model_not_allowed',
      message: `The spawn policy does not allow model '${model}' (allowed: ${policy.allowedModels.join(', ') || 'none'}).`,
      recommended_action: `Ask for an allowed model, or a workspace owner or admin adds '${model}' to allowed_models with ${POLICY_ENDPOINT}.`,
      runtime_instance_ids: [],
    });
  }
  const missing = uniqueInOrder(ask.capabilities).filter((c) => !policy.allowedCapabilities.includes(c));
  if (missing.length > 0) {
    blockers.push({
      code: 'spawn_capability_not_allowed',
      message: `The spawn policy does not allow the capabilities ${missing.map((c) => `'${c}'`).join(', ')}.`,
      recommended_action: `A workspace owner or admin adds them to allowed_capabilities with ${POLICY_ENDPOINT}, or the stage asks for allowed capabilities only.`,
      runtime_instance_ids: [],
    });
  }
  const commandKey = ask.commandKey ?? policy.allowedCommandKeys[0] ?? 'default';
  if (!policy.allowedCommandKeys.includes(commandKey)) {
    blockers.push({
      code: 'spawn_command_not_allowed',
      message: `The spawn policy does not allow command key '${commandKey}' (allowed: ${policy.allowedCommandKeys.join(', ') || 'none'}).`,
      recommended_action: `Ask for an allowed command key, or a workspace owner or admin adds it to allowed_command_keys with ${POLICY_ENDPOINT} (the host's relay must list it in SVC_RELAY_COMMANDS too).`,
      runtime_instance_ids: [],
    });
  }
  return { model, commandKey, blockers };
}

/** A runtime host as host selection sees it. */
export interface SpawnHostCandidate {
  id: string;
  name: string;
  spawnReady: boolean;
  /** Running agents on the host plus spawns in progress there. */
  load: number;
  /** Spawns in progress on the host (requested or in progress). */
  spawning: number;
  /** The host's own limits (null: none of its own). */
  maxAgents: number | null;
  maxConcurrentSpawns: number | null;
}

export interface HostChoice {
  hostId: string | null;
  blocker: SpawnBlocker | null;
}

/**
 * The host a spawn goes to: a spawn-ready one (a heartbeat at most 30 s old, relay ready) with room for an agent
 * (its load under the policy's `limit` and its own `maxAgents`) and for a spawn (its spawns in progress under its
 * own `maxConcurrentSpawns`), the least loaded first, then by name and id. Otherwise the blocker says why none
 * fits: no ready host, or back-pressure (`spawn_host_at_limit`: every ready host is full of agents;
 * `spawn_host_busy`: those with room have their limit of spawns in progress), which carries `retry_after_seconds`.
 */
export function chooseSpawnHost(hosts: readonly SpawnHostCandidate[], limit: number): HostChoice {
  const ready = hosts.filter((h) => h.spawnReady);
  if (ready.length === 0) {
    const ids = hosts.map((h) => h.id);
    return {
      hostId: null,
      blocker: {
        code: 'spawn_no_ready_host',
        message:
          hosts.length === 0
            ? 'The workspace has no runtime host to spawn on.'
            : 'No runtime host of the workspace is spawn ready (a fresh heartbeat and a ready relay).',
        recommended_action:
          hosts.length === 0
            ? 'Register a runtime host and start it with `svc runtime up` under a service manager.'
            : 'Check that `svc runtime up` runs on a host and that its relay is ready (`svc internal relay health`; SVC_RELAY_TOKEN configured), then try again.',
        runtime_instance_ids: ids,
      },
    };
  }
  const agentRoom = ready.filter((h) => h.load < Math.min(limit, h.maxAgents ?? Infinity));
  const room = agentRoom
    .filter((h) => h.maxConcurrentSpawns === null || h.spawning < h.maxConcurrentSpawns)
    .sort((a, b) => a.load - b.load || a.name.localeCompare(b.name) || a.id.localeCompare(b.id));
  const [best] = room;
  if (best) return { hostId: best.id, blocker: null };
  if (agentRoom.length > 0) {
    return {
      hostId: null,
      blocker: {
        code: 'spawn_host_busy',
        message: `Every spawn-ready host with room for an agent already has its limit of spawns in progress (max_concurrent_spawns): ${agentRoom.map((h) => `${h.name} ${h.spawning}/${h.maxConcurrentSpawns}`).join(', ')}.`,
        recommended_action: `Ask again after ${SPAWN_BUSY_RETRY_AFTER_SECONDS} s (a spawn in progress ends by then, usually), or raise the host's max_concurrent_spawns with PUT /api/v1/runtime-hosts/{hostId}/limits.`,
        runtime_instance_ids: agentRoom.map((h) => h.id),
        retry_after_seconds: SPAWN_BUSY_RETRY_AFTER_SECONDS,
      },
    };
  }
  return {
    hostId: null,
    blocker: {
      code: 'spawn_host_at_limit',
      message: `Every spawn-ready host already runs its limit of agents (max_running_agents_per_host ${limit}, or the host's own max_agents): ${ready.map((h) => `${h.name} ${h.load}/${Math.min(limit, h.maxAgents ?? Infinity)}`).join(', ')}.`,
      recommended_action: `Ask again after ${SPAWN_AT_LIMIT_RETRY_AFTER_SECONDS} s; or stop agents that are no longer needed, add a runtime host, or raise the limit (max_running_agents_per_host with ${POLICY_ENDPOINT}, or the host's max_agents with PUT /api/v1/runtime-hosts/{hostId}/limits).`,
      runtime_instance_ids: ready.map((h) => h.id),
      retry_after_seconds: SPAWN_AT_LIMIT_RETRY_AFTER_SECONDS,
    },
  };
}

/** Agent names the hub registers (a subset of the relay's pattern). */
export const AGENT_NAME_PATTERN = /^[a-z0-9][a-z0-9-]{0,62}$/;

const NAME_SUFFIX_ALPHABET = 'abcdefghijklmnopqrstuvwxyz0123456789';

function slug(value: string): string {
  return value
    .toLowerCase()
    .replace(/[^a-z0-9-]+/g, '-')
    .replace(/^[^a-z0-9]+/, '')
    .replace(/-+$/, '');
}

/**
 * A readable agent name for a spawn: `<project code>-<first capability or agent>-<6 characters>`, lower-case,
 * within the hub's and the relay's name patterns (parts are shortened to fit 63 characters).
 */
export function spawnAgentName(
  projectCode: string,
  capabilities: readonly string[],
  random = randomBytes(6),
) {
  let suffix = '';
  for (const byte of random.subarray(0, 6))
    suffix += NAME_SUFFIX_ALPHABET[byte % NAME_SUFFIX_ALPHABET.length];
  const project = slug(projectCode).slice(0, 28) || 'project';
  const capability = slug(capabilities[0] ?? '').slice(0, 26) || 'agent';
  return `${project}-${capability}-${suffix}`;
}
