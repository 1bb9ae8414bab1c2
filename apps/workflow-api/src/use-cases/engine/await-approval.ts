import { auditEngineEvent, updateInvocation } from './reconcile-context';
import type { ReconcileContext } from './reconcile-context';

/** A launch whose template requires a human approval waits for it (`awaiting_approval`) before its run starts. */
export async function awaitApproval(ctx: ReconcileContext): Promise<void> {
  await updateInvocation(ctx, {
    state: 'awaiting_approval',
    attention: 'approval_required',
    attentionReason: "The template's guardrail requires a participant's approval before the run starts.",
  });
  await auditEngineEvent(ctx, 'invocation.awaiting_approval', {});
}
