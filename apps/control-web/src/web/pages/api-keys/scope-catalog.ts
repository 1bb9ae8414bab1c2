import { ALL_SCOPES, DESTRUCTIVE_SCOPES, SCOPE_PRESETS, SCOPE_PRESET_NAMES } from '@svc/auth/scopes';
import type { ScopePreset } from '@svc/auth/scopes';

export type { ScopePreset };
export { SCOPE_PRESETS, SCOPE_PRESET_NAMES };

/** What each preset is for, as the spec's scope families put it. */
export const PRESET_ABOUT: Record<ScopePreset, { label: string; about: string }> = {
  'read-only': {
    label: 'Read-only',
    about: 'Inventory, dashboards, reports and discovery: every read scope except secret-bearing ones.',
  },
  automation: {
    label: 'Automation / CI',
    about: 'Reads plus writing projects, teams and handoffs, workflow contracts, and launching workflows.',
  },
  'agent-runtime': {
    label: 'Agent runtime',
    about: 'For a runtime host: agents, spawns, heartbeats, the runtime config and messages.',
  },
};

const DESTRUCTIVE: ReadonlySet<string> = new Set(DESTRUCTIVE_SCOPES);

/** Destructive or privileged (spec, "Scope families": deletes, approvals, secrets, `admin:*`). */
export function isDestructive(scope: string): boolean {
  return DESTRUCTIVE.has(scope);
}

export type ScopeFamily = 'read' | 'write' | 'destructive' | 'contract';

/** The scope family of the spec's table a scope belongs to. */
export function familyOf(scope: string): ScopeFamily {
  if (isDestructive(scope)) return 'destructive';
  if (scope === 'contract:read') return 'contract';
  if (scope.endsWith(':read')) return 'read';
  return 'write';
}

export const FAMILIES: { family: ScopeFamily; title: string; rule: string }[] = [
  { family: 'read', title: 'Read', rule: 'Preferred for observers.' },
  {
    family: 'write',
    title: 'Write and actions',
    rule: 'Only for the resource families the automation owns.',
  },
  {
    family: 'destructive',
    title: 'Destructive or privileged',
    rule: 'Use a separate key with a named owner, a rotation plan and a narrow runtime boundary.',
  },
  {
    family: 'contract',
    title: 'Integration contract',
    rule: 'Reads the contract document only; grants none of the operations it describes.',
  },
];

/** Every scope the hub knows, grouped by family, in catalog order. */
export function scopesByFamily(): Record<ScopeFamily, string[]> {
  const groups: Record<ScopeFamily, string[]> = { read: [], write: [], destructive: [], contract: [] };
  for (const scope of ALL_SCOPES) groups[familyOf(scope)].push(scope);
  return groups;
}

export function isPreset(value: unknown): value is ScopePreset {
  return typeof value === 'string' && (SCOPE_PRESET_NAMES as readonly string[]).includes(value);
}
