import { silentCredentialNotices } from '@svc/service-kit';
import type { CredentialNoticePublisher } from '@svc/service-kit';
import type { Db } from '../db';
import { compileContracts } from '../domain/contract-matcher';
import type { ClassifierRules, CompiledContracts, MatcherContract } from '../domain/contract-matcher';
import { templateVersionKey } from '../domain/contract-rules';
import { effectiveDefinition, parseTemplateDefinition } from '../domain/template-definition';

/**
 * How long a replica trusts its compiled classifiers before it re-checks the project's contract stamp
 * (`count`, `max(updated_at)`, `sum(revision)` over every contract of the project), by default
 * (`WORKFLOW_CONTRACT_CHECK_MS`). Changes made through any replica invalidate at once through the
 * `contracts_changed` notice; this re-check bounds what a lost notice costs.
 */
export const CONTRACT_CACHE_CHECK_MS = 1000;

/** Each project's active contracts compiled for matching, kept per replica (decision 20). */
export interface ContractIndex {
  /** The project's compiled active contracts, from the cache when its stamp is unchanged. */
  compiled(projectId: string): Promise<CompiledContracts>;
  /** Drops a project's compiled classifiers (a `contracts_changed` notice from any replica). */
  forget(projectId: string): void;
  /**
   * A contract write of the project committed: drops its compiled classifiers here and announces it, so every
   * other replica drops them too (decision 109). Never throws.
   */
  changed(project: { id: string; workspaceId: string }): Promise<void>;
}

interface CacheEntry {
  stamp: string;
  checkedAt: number;
  compiled: CompiledContracts;
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

/** The cache of one app (built by its wiring), so separate apps and test stacks never share entries. */
export function createContractIndex(
  db: Pick<Db, 'workflowContract' | 'workflowTemplate'>,
  options: { checkMs?: number; notices?: CredentialNoticePublisher } = {},
): ContractIndex {
  const checkMs = options.checkMs ?? CONTRACT_CACHE_CHECK_MS;
  const notices = options.notices ?? silentCredentialNotices;
  const entries = new Map<string, CacheEntry>();
  const loading = new Map<string, Promise<CacheEntry>>();

  const readStamp = async (projectId: string): Promise<string> => {
    const stats = await db.workflowContract.aggregate({
      where: { projectId },
      _count: { _all: true },
      _max: { updatedAt: true },
      _sum: { revision: true },
    });
    return `${stats._count._all}:${stats._max.updatedAt?.getTime() ?? 0}:${stats._sum.revision ?? 0}`;
  };

  const compileProject = async (projectId: string, stamp: string): Promise<CacheEntry> => {
    const [contracts, templates] = await Promise.all([
      db.workflowContract.findMany({ where: { projectId, isActive: true } }),
      db.workflowTemplate.findMany({ where: { projectId } }),
    ]);
    const definitions = new Map(templates.map((t) => [templateVersionKey(t.key, t.version), t.definition]));
    const input: MatcherContract[] = contracts.map((row) => {
      const stored = definitions.get(templateVersionKey(row.templateKey, row.templateVersion));
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
                definition: effectiveDefinition(row.templateKey, parseTemplateDefinition(stored), row.name),
              },
      };
    });
    return { stamp, checkedAt: Date.now(), compiled: compileContracts(input) };
  };

  const forget = (projectId: string) => {
    entries.delete(projectId);
    loading.delete(projectId);
  };

  return {
    async compiled(projectId) {
      const entry = entries.get(projectId);
      if (entry && Date.now() - entry.checkedAt < checkMs) return entry.compiled;
      const pending = loading.get(projectId);
      if (pending) return (await pending).compiled;
      const load = (async () => {
        const stamp = await readStamp(projectId);
        const current = entries.get(projectId);
        if (current && current.stamp === stamp) {
          current.checkedAt = Date.now();
          return current;
        }
        return compileProject(projectId, stamp);
      })();
      loading.set(projectId, load);
      try {
        const fresh = await load;
        if (loading.get(projectId) === load) entries.set(projectId, fresh);
        return fresh.compiled;
      } finally {
        if (loading.get(projectId) === load) loading.delete(projectId);
      }
    },
    forget,
    async changed(project) {
      forget(project.id);
      await notices.publish({
        kind: 'contracts_changed',
        project_id: project.id,
        workspace_id: project.workspaceId,
      });
    },
  };
}
