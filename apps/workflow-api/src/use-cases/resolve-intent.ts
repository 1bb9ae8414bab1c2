import type { WorkflowDeps } from '../deps';
import { compileContracts, normalizeIntent } from './contract-matcher';
import type {
  ClassifierRules,
  CompiledContracts,
  MatchExplanation,
  MatcherContract,
} from './contract-matcher';
import { effectiveDefinition, parseTemplateDefinition } from './template-definition';
import type { TemplateStage } from './template-definition';

export { normalizeIntent };
export type { MatchExplanation as ResolveExplanation } from './contract-matcher';

export interface ResolveInput {
  intent: string;
  required_capabilities?: string[];
  metadata?: Record<string, string>;
}

export interface ResolvedTemplateDefinition {
  required_capabilities: string[];
  artifact_schema: { name: string; version: string };
  guardrails: { human_approval_required: boolean };
  /** Always explicit here: a template without stages has one implicit stage. */
  stages: TemplateStage[];
}

export interface ResolveResult {
  matched: boolean;
  contract: { contract_id: string; name: string; priority: number; is_fallback: boolean } | null;
  template: { key: string; version: string; definition: ResolvedTemplateDefinition } | null;
  explanation: MatchExplanation;
}

/**
 * How long a replica trusts its compiled classifiers before it re-checks the project's contract stamp
 * (`count`, `max(updated_at)`, `sum(revision)` over every contract of the project). Changes made through this
 * replica invalidate at once; changes made through another replica are seen within this time.
 */
export const CONTRACT_CACHE_CHECK_MS = 1000;

interface CacheEntry {
  stamp: string;
  checkedAt: number;
  compiled: CompiledContracts;
}

interface ProjectCache {
  entries: Map<string, CacheEntry>;
  loading: Map<string, Promise<CacheEntry>>;
}

/** One cache per database client, so separate apps (and test stacks) in one process never share entries. */
const caches = new WeakMap<object, ProjectCache>();

function cacheOf(deps: WorkflowDeps): ProjectCache {
  let cache = caches.get(deps.db);
  if (!cache) {
    cache = { entries: new Map(), loading: new Map() };
    caches.set(deps.db, cache);
  }
  return cache;
}

/** Drops a project's compiled classifiers; contract writes call it after they commit. */
export function forgetCompiledContracts(deps: WorkflowDeps, projectId: string): void {
  const cache = cacheOf(deps);
  cache.entries.delete(projectId);
  cache.loading.delete(projectId);
}

async function readStamp(deps: WorkflowDeps, projectId: string): Promise<string> {
  const stats = await deps.db.workflowContract.aggregate({
    where: { projectId },
    _count: { _all: true },
    _max: { updatedAt: true },
    _sum: { revision: true },
  });
  return `${stats._count._all}:${stats._max.updatedAt?.getTime() ?? 0}:${stats._sum.revision ?? 0}`;
}

function classifierOf(value: unknown): ClassifierRules {
  const raw = (value ?? {}) as Partial<ClassifierRules>;
  const strings = (list: unknown): string[] =>
    Array.isArray(list) ? list.filter((v): v is string => typeof v === 'string') : [];
  const metadata: Record<string, string> = {};
  if (raw.metadata && typeof raw.metadata === 'object') {
    for (const [k, v] of Object.entries(raw.metadata)) if (typeof v === 'string') metadata[k] = v;
  }
  return {
    intentContains: strings(raw.intentContains),
    requiredCapabilities: strings(raw.requiredCapabilities),
    metadata,
  };
}

async function compileProject(deps: WorkflowDeps, projectId: string, stamp: string): Promise<CacheEntry> {
  const [contracts, templates] = await Promise.all([
    deps.db.workflowContract.findMany({ where: { projectId, isActive: true } }),
    deps.db.workflowTemplate.findMany({ where: { projectId } }),
  ]);
  const definitions = new Map(templates.map((t) => [`${t.key}\u0000${t.version}`, t.definition]));
  const input: MatcherContract[] = contracts.map((row) => {
    const stored = definitions.get(`${row.templateKey}\u0000${row.templateVersion}`);
    return {
      id: row.id,
      name: row.name,
      priority: row.priority,
      isFallback: row.isFallback,
      classifier: classifierOf(row.classifier),
      template:
        stored === undefined
          ? null
          : {
              key: row.templateKey,
              version: row.templateVersion,
              definition: effectiveDefinition(
                row.templateKey,
                parseTemplateDefinition(stored),
                row.name,
              ) as never,
            },
    };
  });
  return { stamp, checkedAt: Date.now(), compiled: compileContracts(input) };
}

/** The project's compiled active contracts, from the cache when its stamp is unchanged. */
export async function compiledContractsOf(deps: WorkflowDeps, projectId: string): Promise<CompiledContracts> {
  const cache = cacheOf(deps);
  const entry = cache.entries.get(projectId);
  if (entry && Date.now() - entry.checkedAt < CONTRACT_CACHE_CHECK_MS) return entry.compiled;
  const pending = cache.loading.get(projectId);
  if (pending) return (await pending).compiled;
  const load = (async () => {
    const stamp = await readStamp(deps, projectId);
    const current = cache.entries.get(projectId);
    if (current && current.stamp === stamp) {
      current.checkedAt = Date.now();
      return current;
    }
    return compileProject(deps, projectId, stamp);
  })();
  cache.loading.set(projectId, load);
  try {
    const fresh = await load;
    if (cache.loading.get(projectId) === load) cache.entries.set(projectId, fresh);
    return fresh.compiled;
  } finally {
    if (cache.loading.get(projectId) === load) cache.loading.delete(projectId);
  }
}

/**
 * Resolves an intent against the project's active contracts (ARCHITECTURE §4). Read-only: it writes no row of any
 * table. `matched: false` (with the full explanation) when no contract matches.
 */
export async function resolveIntent(
  deps: WorkflowDeps,
  projectId: string,
  input: ResolveInput,
): Promise<ResolveResult> {
  const compiled = await compiledContractsOf(deps, projectId);
  const { winner, explanation } = compiled.match(input);
  if (!winner) return { matched: false, contract: null, template: null, explanation };
  return {
    matched: true,
    contract: {
      contract_id: winner.id,
      name: winner.name,
      priority: winner.priority,
      is_fallback: winner.isFallback,
    },
    template: winner.template
      ? {
          key: winner.template.key,
          version: winner.template.version,
          definition: structuredClone(winner.template.definition) as unknown as ResolvedTemplateDefinition,
        }
      : null,
    explanation,
  };
}
