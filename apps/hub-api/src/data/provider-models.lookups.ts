import { AppError } from '@svc/service-kit';
import type { Db } from '../db';
import { closeMatches } from '../domain/provider-models';
import type { ProviderModel } from '../generated/prisma/client';

/**
 * The active catalog entry with exactly this `provider/model` identifier, or null. There are no aliases and
 * no normalization: `anthropic/claude-sonnet-4-5` matches, `Anthropic/claude-sonnet-4-5`,
 * `claude-sonnet-4-5` and `anthropic/sonnet` do not.
 */
export async function findProviderModel(db: Db, id: string): Promise<ProviderModel | null> {
  const found = await db.providerModel.findUnique({ where: { id } });
  return found?.active ? found : null;
}

/** Every active identifier of the catalog, in a stable order. */
export async function activeProviderModelIds(db: Db): Promise<string[]> {
  const rows = await db.providerModel.findMany({
    where: { active: true },
    select: { id: true },
    orderBy: { id: 'asc' },
  });
  return rows.map((row) => row.id);
}

/**
 * The active catalog entry for an exact `provider/model` identifier; anything else is
 * `provider_model_unsupported` with the closest catalog identifiers (`close_matches`): 400 when the caller sent
 * the identifier, 409 (`status`) when it comes from stored state, such as an agent's registered model.
 */
export async function requireProviderModel(
  db: Db,
  id: string,
  options: { field?: string; status?: 400 | 409 } = {},
): Promise<ProviderModel> {
  const { field = 'model', status = 400 } = options;
  const found = await findProviderModel(db, id);
  if (found) return found;
  const matches = closeMatches(id, await activeProviderModelIds(db));
  const hint =
    matches.length > 0
      ? ` Did you mean ${matches.map((m) => `'${m}'`).join(', ')}?`
      : ' GET /api/v1/provider-models lists the supported identifiers.';
  throw new AppError({
    status,
    code: 'provider_model_unsupported',
    detail: `${field} '${id}' is not a supported provider/model identifier; use an exact identifier from the current catalog (no aliases).${hint}`,
    extra: { field, close_matches: matches },
  });
}

/** Providers of the active catalog, sorted. */
export async function catalogProviders(db: Db): Promise<string[]> {
  const rows = await db.providerModel.findMany({
    where: { active: true },
    distinct: ['provider'],
    select: { provider: true },
    orderBy: { provider: 'asc' },
  });
  return rows.map((row) => row.provider);
}
