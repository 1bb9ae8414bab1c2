import type { HubApi } from '@svc/sdk';

export type AuditQuery = NonNullable<HubApi.operations['listAuditEvents']['parameters']['query']>;
export type ActorKind = HubApi.components['schemas']['AuditActorKind'];

export const ACTOR_KINDS: readonly ActorKind[] = [
  'participant',
  'api_key',
  'agent',
  'service',
  'relay_token',
  'anonymous',
];

/** The filters as the form holds them (text), kept in the page's address so a view can be shared. */
export interface AuditFilters {
  action: string;
  actor_kind: string;
  actor_id: string;
  target_type: string;
  target_id: string;
  since: string;
  until: string;
}

export const FILTER_KEYS = [
  'action',
  'actor_kind',
  'actor_id',
  'target_type',
  'target_id',
  'since',
  'until',
] as const satisfies readonly (keyof AuditFilters)[];

export function filtersFrom(params: URLSearchParams): AuditFilters {
  const read = (key: keyof AuditFilters) => params.get(key) ?? '';
  return {
    action: read('action'),
    actor_kind: read('actor_kind'),
    actor_id: read('actor_id'),
    target_type: read('target_type'),
    target_id: read('target_id'),
    since: read('since'),
    until: read('until'),
  };
}

export function paramsFrom(filters: AuditFilters): URLSearchParams {
  const params = new URLSearchParams();
  for (const key of FILTER_KEYS) {
    const value = filters[key].trim();
    if (value) params.set(key, value);
  }
  return params;
}

/** The contract's action filter: an exact action, or a prefix ending in `.` or `*`. */
const ACTION_PATTERN = /^[a-z0-9_-]+(\.[a-z0-9_-]+)*(\.\*?|\*)?$/;

/** `datetime-local` text (the reader's time zone) as an instant, or undefined. */
function instant(local: string): string | undefined {
  if (!local) return undefined;
  const date = new Date(local);
  return Number.isNaN(date.getTime()) ? undefined : date.toISOString();
}

/** What is wrong with the filters, field by field (checked before asking; the hub checks again). */
export function filterErrors(filters: AuditFilters): Partial<Record<keyof AuditFilters, string>> {
  const errors: Partial<Record<keyof AuditFilters, string>> = {};
  const action = filters.action.trim();
  if (action && !ACTION_PATTERN.test(action))
    errors.action = 'Use an action such as api_key.created, or a prefix such as api_key.* or credential.';
  const targetType = filters.target_type.trim();
  if (targetType && !/^[a-z0-9_-]+$/.test(targetType))
    errors.target_type = 'Lower-case letters, digits, _ and - only (e.g. api_key).';
  const since = instant(filters.since);
  const until = instant(filters.until);
  if (since && until && until < since) errors.until = 'Must not be before “From”.';
  return errors;
}

/** The hub's query for the filters (without paging). */
export function queryFrom(filters: AuditFilters): AuditQuery {
  const query: AuditQuery = {};
  const action = filters.action.trim();
  if (action) query.action = action;
  if ((ACTOR_KINDS as readonly string[]).includes(filters.actor_kind))
    query.actor_kind = filters.actor_kind as ActorKind;
  if (filters.actor_id.trim()) query.actor_id = filters.actor_id.trim();
  if (filters.target_type.trim()) query.target_type = filters.target_type.trim();
  if (filters.target_id.trim()) query.target_id = filters.target_id.trim();
  const since = instant(filters.since);
  const until = instant(filters.until);
  if (since) query.since = since;
  if (until) query.until = until;
  return query;
}
