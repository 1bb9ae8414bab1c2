import type { Db, DbTx } from '../db';
import { defaultAssistSettings } from '../domain/assist-settings';
import type { AssistSettings } from '../domain/assist-settings';
import type { AssistanceSettings } from '../generated/prisma/client';

export function assistSettingsOf(row: AssistanceSettings): AssistSettings {
  return {
    projectId: row.projectId,
    enabled: row.enabled,
    allowAssistedRouting: row.allowAssistedRouting,
    dataMayLeaveWorkspace: row.dataMayLeaveWorkspace,
    storePrompts: row.storePrompts,
    assistOnTie: row.assistOnTie,
    provider: row.provider,
    model: row.model,
    baseUrl: row.baseUrl,
    timeoutMs: row.timeoutMs,
    budget: {
      callsPerDay: row.callsPerDay,
      tokensPerDay: Number(row.tokensPerDay),
      callsPerMonth: row.callsPerMonth,
      tokensPerMonth: Number(row.tokensPerMonth),
      warningPercent: row.warningPercent,
    },
    revision: row.revision,
    updatedAt: row.updatedAt,
  };
}

/** The project's model-assistance settings; every default (assistance off) when it never set them. */
export async function loadAssistSettings(db: Db | DbTx, projectId: string): Promise<AssistSettings> {
  const row = await db.assistanceSettings.findUnique({ where: { projectId } });
  return row ? assistSettingsOf(row) : defaultAssistSettings(projectId);
}
