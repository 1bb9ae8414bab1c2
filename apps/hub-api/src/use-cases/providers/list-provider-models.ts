import type { HubDeps } from '../../deps';
import type { ProviderModel } from '../../generated/prisma/client';

/** The active provider/model catalog, by identifier. */
export function listProviderModels(deps: HubDeps): Promise<ProviderModel[]> {
  return deps.db.providerModel.findMany({ where: { active: true }, orderBy: { id: 'asc' } });
}
