import type { ParticipantActor } from '@svc/auth';
import { AppError, newId } from '@svc/service-kit';
import type { HubDeps } from '../../deps';
import type { WorkflowDraft } from '../../generated/prisma/client';

const DERIVED_TITLE_LENGTH = 80;

/** The first non-empty line of the intent, cut to 80 characters. */
function titleFromIntent(intent: string): string {
  const line = intent.split(/\r?\n/).find((l) => l.trim() !== '') ?? intent;
  const title = line.trim().replace(/\s+/g, ' ');
  return title.length > DERIVED_TITLE_LENGTH ? `${title.slice(0, DERIVED_TITLE_LENGTH - 1)}…` : title;
}

/**
 * Generic control records an intent as a governed workflow draft (status `draft`). A draft launches
 * nothing — no invocation, no run — and nothing in the hub launches a draft: a project invocation needs an
 * explicit project contract and template match in the Workflow API.
 */
export async function createWorkflowDraft(
  deps: HubDeps,
  actor: ParticipantActor,
  workspaceId: string,
  input: { intent: string; title?: string; projectId?: string; requestId?: string },
): Promise<WorkflowDraft> {
  if (input.projectId) {
    const project = await deps.db.project.findFirst({
      where: { id: input.projectId, workspaceId },
      select: { id: true },
    });
    if (!project) {
      throw new AppError({
        status: 400,
        code: 'project_not_found',
        detail: `No project '${input.projectId}' in this workspace.`,
      });
    }
  }
  const intent = input.intent.trim();
  const title = input.title?.trim() || titleFromIntent(intent);
  return deps.db.$transaction(async (tx) => {
    const draft = await tx.workflowDraft.create({
      data: {
        id: newId('wfd'),
        workspaceId,
        projectId: input.projectId ?? null,
        title,
        intent,
        status: 'draft',
        createdById: actor.participantId,
        createdAt: deps.now(),
      },
    });
    await deps.audit.record(
      {
        workspaceId,
        actor,
        action: 'workflow_draft.created',
        targetType: 'workflow_draft',
        targetId: draft.id,
        data: { project_id: draft.projectId, title: draft.title },
        requestId: input.requestId,
      },
      tx,
    );
    return draft;
  });
}
