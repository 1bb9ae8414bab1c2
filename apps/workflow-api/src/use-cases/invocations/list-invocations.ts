import type { WorkflowApi } from '@svc/contracts';
import type { WorkflowDeps } from '../../deps';
import { decodeDeliveryCursor, encodeDeliveryCursor } from '../../domain/delivery-subscription';
import type { Invocation, Prisma } from '../../generated/prisma/client';

type Schemas = WorkflowApi.components['schemas'];

export interface ListInvocationsFilter {
  states?: Schemas['InvocationsState'][];
  attentions?: Schemas['InvocationsAttention'][];
  contractId?: string;
  templateKey?: string;
  templateVersion?: string;
  createdSince?: string;
  createdUntil?: string;
  /** An invocation id (exact) or words the intent contains (case-insensitive). */
  search?: string;
  limit?: number;
  cursor?: string;
}

const DEFAULT_PAGE = 50;
const MAX_PAGE = 200;

/**
 * A page of the project's invocations, newest first (created time, then id), every filter applied; the cursor
 * (created time and id of the page's last row, the same form as the deliveries list) continues after that row.
 */
export async function listInvocations(
  deps: WorkflowDeps,
  projectId: string,
  filter: ListInvocationsFilter,
): Promise<{ items: Invocation[]; nextCursor: string | null }> {
  const limit = Math.min(Math.max(filter.limit ?? DEFAULT_PAGE, 1), MAX_PAGE);
  const and: Prisma.InvocationWhereInput[] = [{ projectId }];
  if (filter.states?.length) and.push({ state: { in: filter.states } });
  if (filter.attentions?.length) and.push({ attention: { in: filter.attentions } });
  if (filter.contractId) and.push({ contractId: filter.contractId });
  if (filter.templateKey) and.push({ templateKey: filter.templateKey });
  if (filter.templateVersion) and.push({ templateVersion: filter.templateVersion });
  if (filter.createdSince) and.push({ createdAt: { gte: new Date(filter.createdSince) } });
  if (filter.createdUntil) and.push({ createdAt: { lt: new Date(filter.createdUntil) } });
  const search = filter.search?.trim();
  if (search) {
    and.push({ OR: [{ id: search }, { intent: { contains: search, mode: 'insensitive' } }] });
  }
  if (filter.cursor) {
    const after = decodeDeliveryCursor(filter.cursor);
    and.push({
      OR: [{ createdAt: { lt: after.createdAt } }, { createdAt: after.createdAt, id: { lt: after.id } }],
    });
  }
  const rows = await deps.db.invocation.findMany({
    where: { AND: and },
    orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
    take: limit + 1,
  });
  const page = rows.slice(0, limit);
  const last = page[page.length - 1];
  return { items: page, nextCursor: rows.length > limit && last ? encodeDeliveryCursor(last) : null };
}
