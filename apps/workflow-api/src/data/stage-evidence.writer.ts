import { newId, redactValue } from '@svc/service-kit';
import type { Db, Tx } from '../db';
import type { StageEvidence } from '../generated/prisma/client';

/** One piece of evidence as an owner submits it. */
export interface EvidenceItem {
  kind: string;
  content: unknown;
}

/** The row of one item: its own id, its content redacted before it is stored. */
function evidenceRow(stageId: string, agentId: string, item: EvidenceItem) {
  return {
    id: newId('evd'),
    stageId,
    agentId,
    kind: item.kind,
    content: (redactValue(item.content ?? null) ?? null) as never,
  };
}

/** One piece of evidence of `stageId` by its owner `agentId`, redacted, returned as stored. */
export function storeEvidence(
  db: Db | Tx,
  stageId: string,
  agentId: string,
  item: EvidenceItem,
): Promise<StageEvidence> {
  return db.stageEvidence.create({ data: evidenceRow(stageId, agentId, item) });
}

/**
 * The rows of evidence that comes with a completion or a publication, in the order given (each row a
 * millisecond apart, so listings by time keep that order).
 */
export function evidenceBatchRows(
  stageId: string,
  agentId: string,
  items: readonly EvidenceItem[],
  now: Date,
): (ReturnType<typeof evidenceRow> & { createdAt: Date })[] {
  const first = now.getTime() - items.length;
  return items.map((item, i) => ({ ...evidenceRow(stageId, agentId, item), createdAt: new Date(first + i) }));
}

/** Evidence that comes with a completion or a publication, in its transaction: one statement for all of it. */
export async function storeEvidenceBatch(
  tx: Tx,
  stageId: string,
  agentId: string,
  items: readonly EvidenceItem[] | undefined,
  now: Date,
): Promise<void> {
  if (!items || items.length === 0) return;
  await tx.stageEvidence.createMany({ data: evidenceBatchRows(stageId, agentId, items, now) });
}
