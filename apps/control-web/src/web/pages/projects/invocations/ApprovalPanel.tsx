import { useState } from 'react';
import { unwrap } from '../../../app/api';
import { MANAGERS, roleAllows } from '../../../app/roles';
import { useClients } from '../../../app/session';
import { useWorkspace } from '../../../app/workspace';
import { ProblemMessage } from '../../../components/ProblemMessage';
import { dateTime } from '../../../components/time';
import { useProjectId } from '../project';
import type { Invocation } from './timeline-model';

/**
 * The human approval of a run held by its template's guardrail: owners and admins approve (the stages start)
 * or reject (the invocation ends cancelled), with an optional comment; others see who may decide. After the
 * decision it shows who decided, when and why.
 */
export function ApprovalPanel({ invocation, onDecided }: { invocation: Invocation; onDecided: () => void }) {
  const projectId = useProjectId();
  const { role } = useWorkspace();
  const { workflow } = useClients();
  const [comment, setComment] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const approval = invocation.approval;
  if (!approval?.required) return null;

  if (approval.decision !== null)
    return (
      <p className="approval-decided">
        {approval.decision === 'approve' ? 'Approved' : 'Rejected'} {dateTime(approval.decided_at)}
        {approval.comment ? ` — “${approval.comment}”` : ''}
      </p>
    );
  if (invocation.state !== 'awaiting_approval') return null;

  const decide = async (decision: 'approve' | 'reject') => {
    setBusy(true);
    setError(undefined);
    try {
      unwrap(
        await workflow.raw.POST('/api/v1/projects/{projectId}/workflow/invocations/{invocationId}/approval', {
          params: { path: { projectId, invocationId: invocation.invocation_id } },
          body: { decision, ...(comment.trim() ? { comment: comment.trim() } : {}) },
        }),
      );
      onDecided();
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };

  return (
    <section className="panel approval" aria-labelledby="approval-title">
      <h2 id="approval-title">Approval needed</h2>
      <p>The template asks a person to approve each run before its stages start.</p>
      {roleAllows(role, MANAGERS) ? (
        <>
          <div className="field">
            <label htmlFor="approval-comment">Comment (optional)</label>
            <input
              id="approval-comment"
              value={comment}
              maxLength={2000}
              onChange={(e) => setComment(e.currentTarget.value)}
            />
          </div>
          <div className="form-actions">
            <button
              type="button"
              className="button-primary"
              disabled={busy}
              onClick={() => void decide('approve')}
            >
              Approve run
            </button>
            <button
              type="button"
              className="button-danger"
              disabled={busy}
              onClick={() => void decide('reject')}
            >
              Reject run
            </button>
          </div>
          <ProblemMessage error={error} context="The decision was not recorded" />
        </>
      ) : (
        <p className="muted">A workspace owner or admin decides; your role ({role}) may not.</p>
      )}
    </section>
  );
}
