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
] as const;
export type SpawnBlockerCode = (typeof SPAWN_BLOCKER_CODES)[number];

/** A reason a spawn is refused, in the spec's blocker category "spawn policy", with what an operator does. */
export interface SpawnBlocker {
  code: SpawnBlockerCode;
  message: string;
  recommended_action: string;
  runtime_instance_ids: string[];
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
}

export interface HostChoice {
  hostId: string | null;
  blocker: SpawnBlocker | null;
}

/**
 * The host a spawn goes to: a spawn-ready one (fresh heartbeat, relay ready) whose load is under the limit,
 * the least loaded first, then by name and id. Otherwise the blocker says why none fits.
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
  const room = ready
    .filter((h) => h.load < limit)
    .sort((a, b) => a.load - b.load || a.name.localeCompare(b.name) || a.id.localeCompare(b.id));
  const [best] = room;
  if (!best) {
    return {
      hostId: null,
      blocker: {
        code: 'spawn_host_at_limit',
        message: `Every spawn-ready host already runs ${limit} agent(s) (max_running_agents_per_host).`,
        recommended_action: `Stop agents that are no longer needed, add a runtime host, or raise max_running_agents_per_host with ${POLICY_ENDPOINT}.`,
        runtime_instance_ids: ready.map((h) => h.id),
      },
    };
  }
  return { hostId: best.id, blocker: null };
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
