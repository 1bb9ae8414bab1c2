import { actorIdentity } from '@svc/auth';
import type { ParticipantActor } from '@svc/auth';
import type { WorkflowApi } from '@svc/contracts';
import { AppError } from '@svc/service-kit';
import type { MemberDirectory } from '../../auth/member-directory';
import type { ProjectRef } from '../../auth/project-directory';
import { assistSettingsOf, loadAssistSettings } from '../../data/assist-settings.lookups';
import type { WorkflowDeps } from '../../deps';
import { assertUsableAssistSettings, assistSettingsFields } from '../../domain/assist-settings';
import type { AssistSettings } from '../../domain/assist-settings';

export type AssistanceSettingsPatch = WorkflowApi.components['schemas']['AssistanceSettingsPatch'];

/** Workspace roles that may change a project's model assistance. */
const ADMIN_ROLES = ['owner', 'admin'];

/**
 * Changes a project's model-assistance settings: workspace owners and admins only (403
 * `assistance_role_required`), fields sent replace the stored ones, the result must be usable (see
 * {@link assertUsableAssistSettings}). The row is locked while it changes, and every change is the audit event
 * `assistance.settings_changed` with the settings before and after, in the same transaction.
 */
export async function updateAssistanceSettings(
  deps: WorkflowDeps,
  members: MemberDirectory,
  actor: ParticipantActor,
  project: ProjectRef,
  patch: AssistanceSettingsPatch,
  requestId?: string,
): Promise<AssistSettings> {
  const member = await members.find(project.workspace.id, actor.participantId);
  if (!member || !ADMIN_ROLES.includes(member.role)) {
    throw new AppError({
      status: 403,
      code: 'assistance_role_required',
      detail: "Only a workspace owner or admin may change a project's model assistance.",
    });
  }
  const who = actorIdentity(actor);
  return deps.db.$transaction(
    async (tx) => {
      await tx.$queryRaw`SELECT project_id FROM assistance_settings WHERE project_id = ${project.id} FOR UPDATE`;
      const before = await loadAssistSettings(tx, project.id);
      const after: AssistSettings = {
        ...before,
        ...(patch.enabled !== undefined ? { enabled: patch.enabled } : {}),
        ...(patch.allow_assisted_routing !== undefined
          ? { allowAssistedRouting: patch.allow_assisted_routing }
          : {}),
        ...(patch.data_may_leave_workspace !== undefined
          ? { dataMayLeaveWorkspace: patch.data_may_leave_workspace }
          : {}),
        ...(patch.store_prompts !== undefined ? { storePrompts: patch.store_prompts } : {}),
        ...(patch.assist_on_tie !== undefined ? { assistOnTie: patch.assist_on_tie } : {}),
        ...(patch.provider !== undefined ? { provider: patch.provider } : {}),
        ...(patch.model !== undefined ? { model: patch.model } : {}),
        ...(patch.base_url !== undefined ? { baseUrl: patch.base_url } : {}),
        ...(patch.timeout_ms !== undefined ? { timeoutMs: patch.timeout_ms } : {}),
        budget: {
          callsPerDay: patch.budget?.calls_per_day ?? before.budget.callsPerDay,
          tokensPerDay: patch.budget?.tokens_per_day ?? before.budget.tokensPerDay,
          callsPerMonth: patch.budget?.calls_per_month ?? before.budget.callsPerMonth,
          tokensPerMonth: patch.budget?.tokens_per_month ?? before.budget.tokensPerMonth,
          warningPercent: patch.budget?.warning_percent ?? before.budget.warningPercent,
        },
      };
      assertUsableAssistSettings(after);
      if (
        before.revision > 0 &&
        JSON.stringify(assistSettingsFields(before)) === JSON.stringify(assistSettingsFields(after))
      ) {
        return before;
      }
      const data = {
        workspaceId: project.workspace.id,
        enabled: after.enabled,
        allowAssistedRouting: after.allowAssistedRouting,
        dataMayLeaveWorkspace: after.dataMayLeaveWorkspace,
        storePrompts: after.storePrompts,
        assistOnTie: after.assistOnTie,
        provider: after.provider,
        model: after.model,
        baseUrl: after.baseUrl,
        timeoutMs: after.timeoutMs,
        callsPerDay: after.budget.callsPerDay,
        tokensPerDay: BigInt(after.budget.tokensPerDay),
        callsPerMonth: after.budget.callsPerMonth,
        tokensPerMonth: BigInt(after.budget.tokensPerMonth),
        warningPercent: after.budget.warningPercent,
        updatedByKind: who.kind,
        updatedById: who.id,
        updatedAt: deps.now(),
      };
      const row = await tx.assistanceSettings.upsert({
        where: { projectId: project.id },
        create: { projectId: project.id, ...data, revision: 1 },
        update: { ...data, revision: { increment: 1 } },
      });
      await deps.audit.record(
        {
          workspaceId: project.workspace.id,
          projectId: project.id,
          actor,
          action: 'assistance.settings_changed',
          targetType: 'project',
          targetId: project.id,
          data: {
            before: assistSettingsFields(before),
            after: assistSettingsFields(after),
            revision: row.revision,
          },
          ...(requestId ? { requestId } : {}),
        },
        tx,
      );
      return assistSettingsOf(row);
    },
    { timeout: 15_000, maxWait: 10_000 },
  );
}
