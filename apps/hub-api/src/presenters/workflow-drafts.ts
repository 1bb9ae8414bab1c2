import type { HubApi } from '@svc/contracts';
import type { WorkflowDraft } from '../generated/prisma/client';

type Schemas = HubApi.components['schemas'];

const iso = (d: Date) => d.toISOString();

export function presentWorkflowDraft(d: WorkflowDraft): Schemas['ControlWorkflowDraft'] {
  return {
    id: d.id,
    workspace_id: d.workspaceId,
    project_id: d.projectId,
    title: d.title,
    intent: d.intent,
    status: 'draft',
    created_by: d.createdById,
    created_at: iso(d.createdAt),
  };
}
