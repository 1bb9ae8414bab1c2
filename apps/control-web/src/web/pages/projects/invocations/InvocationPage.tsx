import { useMemo, useState } from 'react';
import { Link, useNavigate, useParams } from 'react-router';
import { unwrap } from '../../../app/api';
import { usePolling } from '../../../app/hooks';
import { useWorkspaceAgents } from '../../../app/agents';
import { NameOf } from '../../../app/names';
import { useClients } from '../../../app/session';
import { ConfirmDialog } from '../../../components/ConfirmDialog';
import { Loading } from '../../../components/Loading';
import { ProblemMessage } from '../../../components/ProblemMessage';
import { ago, dateTime } from '../../../components/time';
import { ProjectFrame, useCanEdit, useProjectBase, useProjectId } from '../project';
import { ApprovalPanel } from './ApprovalPanel';
import { ArtifactView } from './ArtifactView';
import { Blockers } from './Blockers';
import { Deliveries } from './Deliveries';
import { StageTimeline } from './StageTimeline';

const TERMINAL = new Set(['completed', 'failed', 'cancelled']);
/** A retry starts from an invocation that ended without a result. */
const RETRYABLE = new Set(['failed', 'cancelled']);
/** How often a moving run is read again. */
const LIVE_MS = 1500;

/**
 * One invocation, live: its state and attention, the stage timeline, what holds it, its artifact and
 * envelope, its deliveries (attempts, replay) and cancel. Polling stops once the invocation is terminal.
 */
export function InvocationPage() {
  const { invocationId } = useParams();
  const projectId = useProjectId();
  const canEdit = useCanEdit();
  const { workflow } = useClients();
  const [terminal, setTerminal] = useState(false);
  const [cancelling, setCancelling] = useState(false);
  const [launching, setLaunching] = useState(false);
  const [launchError, setLaunchError] = useState<unknown>(undefined);
  const [reason, setReason] = useState('');
  const [retrying, setRetrying] = useState(false);
  const navigate = useNavigate();
  const base = useProjectBase();
  const invocation = usePolling(
    async (signal) => {
      const data = unwrap(
        await workflow.raw.GET('/api/v1/projects/{projectId}/workflow/invocations/{invocationId}', {
          params: { path: { projectId, invocationId: invocationId! } },
          signal,
        }),
      );
      setTerminal(TERMINAL.has(data.state));
      return data;
    },
    terminal ? 0 : LIVE_MS,
    [projectId, invocationId],
  );
  const agents = useWorkspaceAgents(terminal ? 0 : 10_000);
  const agentNames = useMemo(
    () => new Map((agents.data ?? []).map((a) => [a.id, a.name] as const)),
    [agents.data],
  );
  const inv = invocation.data;

  return (
    <ProjectFrame title="Invocation">
      {invocation.loading && !inv && <Loading what="Loading the invocation" />}
      <ProblemMessage error={invocation.error} context="The invocation could not be loaded" />
      {inv && (
        <>
          <div className="invocation-head">
            <p className="intent-text">“{inv.intent}”</p>
            <p>
              <span className={`badge state-${inv.state}`} data-testid="invocation-state">
                {inv.state.replace(/_/g, ' ')}
              </span>{' '}
              {inv.attention !== 'none' && (
                <span className="badge badge-warn">attention: {inv.attention.replace(/_/g, ' ')}</span>
              )}{' '}
              <span className="muted small" role="status">
                {terminal ? 'Final state.' : `Live · updated ${ago(invocation.updatedAt ?? null)}`}
              </span>
            </p>
            {canEdit && (inv.state === 'received' || inv.state === 'blocked') && inv.route.matched && (
              <button
                type="button"
                className="button-primary"
                disabled={launching}
                onClick={() => {
                  setLaunching(true);
                  setLaunchError(undefined);
                  void workflow.raw
                    .POST('/api/v1/projects/{projectId}/workflow/invocations/{invocationId}/launch', {
                      params: { path: { projectId, invocationId: invocationId! } },
                    })
                    .then(unwrap)
                    .then(() => invocation.reload())
                    .catch(setLaunchError)
                    .finally(() => setLaunching(false));
                }}
              >
                {launching ? 'Launching…' : inv.state === 'blocked' ? 'Launch again' : 'Launch'}
              </button>
            )}
            {canEdit && !terminal && (
              <button type="button" className="button-danger" onClick={() => setCancelling(true)}>
                Cancel invocation
              </button>
            )}
            {canEdit && RETRYABLE.has(inv.state) && (
              <button type="button" className="button-primary" onClick={() => setRetrying(true)}>
                Retry
              </button>
            )}
          </div>
          <ProblemMessage error={launchError} context="The invocation was not launched" />
          <dl className="facts">
            <dt>Invocation</dt>
            <dd>
              <code>{inv.invocation_id}</code>
            </dd>
            <dt>Route</dt>
            <dd>
              {inv.route.matched ? (
                <>
                  <code>
                    {inv.route.template_key}@{inv.route.template_version}
                  </code>{' '}
                  ({inv.route.selection.replace(/_/g, ' ')}
                  {inv.route.winner_reason ? `: ${inv.route.winner_reason}` : ''})
                </>
              ) : (
                'no contract matched: it cannot launch'
              )}
            </dd>
            <dt>Created</dt>
            <dd>{dateTime(inv.created_at)}</dd>
            {inv.retry_of && (
              <>
                <dt>Retry of</dt>
                <dd>
                  <Link to={`${base}/invocations/${inv.retry_of}`} data-testid="retry-of">
                    the earlier invocation
                  </Link>{' '}
                  <code className="muted small">{inv.retry_of}</code>
                </dd>
              </>
            )}
            {(inv.retried_as ?? []).length > 0 && (
              <>
                <dt>Retried as</dt>
                <dd>
                  <ul className="plain-list" data-testid="retried-as">
                    {(inv.retried_as ?? []).map((id, i) => (
                      <li key={id}>
                        <Link to={`${base}/invocations/${id}`}>
                          {i === (inv.retried_as ?? []).length - 1 ? 'the latest retry' : `retry ${i + 1}`}
                        </Link>{' '}
                        <code className="muted small">{id}</code>
                      </li>
                    ))}
                  </ul>
                </dd>
              </>
            )}
            {inv.attention_reason && (
              <>
                <dt>Attention</dt>
                <dd>{inv.attention_reason}</dd>
              </>
            )}
            {inv.failure && (
              <>
                <dt>Failure</dt>
                <dd>
                  <code>{inv.failure.reason}</code> {inv.failure.message}
                </dd>
              </>
            )}
            {inv.cancellation && (
              <>
                <dt>Cancelled</dt>
                <dd>
                  by{' '}
                  <NameOf
                    id={inv.cancellation.cancelled_by.id}
                    fallback={inv.cancellation.cancelled_by.kind === 'api_key' ? 'an API key' : 'a person'}
                  />{' '}
                  {dateTime(inv.cancellation.cancelled_at)}
                  {inv.cancellation.reason ? ` — ${inv.cancellation.reason}` : ''}
                </dd>
              </>
            )}
          </dl>

          <ApprovalPanel invocation={inv} onDecided={invocation.reload} />

          <h2>Stage timeline</h2>
          {inv.stages.length > 0 ? (
            <StageTimeline invocation={inv} agentNames={agentNames} />
          ) : (
            <p className="muted">
              {inv.state === 'received'
                ? inv.route.matched
                  ? canEdit
                    ? 'Not launched yet: launch it to start its stages.'
                    : 'Not launched yet: the stages appear once someone launches it.'
                  : 'No contract matched its intent, so it cannot launch: try the intent again once a contract matches.'
                : inv.state === 'awaiting_approval'
                  ? 'The stages start once the run is approved.'
                  : 'No stages have started.'}
            </p>
          )}
          {inv.latest_handoff && (
            <p className="muted small">
              Latest handoff <code>{inv.latest_handoff.handoff_id}</code>: stage{' '}
              <code>{inv.latest_handoff.stage_key}</code> to{' '}
              {inv.latest_handoff.assignee_agent_id
                ? (agentNames.get(inv.latest_handoff.assignee_agent_id) ??
                  inv.latest_handoff.assignee_agent_id)
                : '—'}{' '}
              {ago(inv.latest_handoff.created_at)}
            </p>
          )}
          {inv.blockers.length > 0 && (
            <>
              <h2>What holds it</h2>
              <Blockers blockers={inv.blockers} />
            </>
          )}

          <h2>Artifact</h2>
          {inv.artifact ? (
            <ArtifactView invocationId={inv.invocation_id} />
          ) : (
            <p className="muted">No artifact yet{terminal ? '.' : ': it is published by the final stage.'}</p>
          )}

          <h2>Deliveries</h2>
          <Deliveries invocationId={inv.invocation_id} live={!terminal} />
        </>
      )}
      <ConfirmDialog
        open={retrying}
        title="Retry invocation"
        confirmLabel="Retry"
        onConfirm={async () => {
          const retried = unwrap(
            await workflow.raw.POST(
              '/api/v1/projects/{projectId}/workflow/invocations/{invocationId}/retry',
              {
                params: {
                  path: { projectId, invocationId: invocationId! },
                  header: { 'Idempotency-Key': crypto.randomUUID() },
                },
              },
            ),
          );
          void navigate(`${base}/invocations/${retried.invocation_id}`);
        }}
        onClose={() => setRetrying(false)}
      >
        <p>
          Start a new invocation with the same request? It is created as received, linked to this one, and its
          route is chosen again from the project's contracts. This invocation stays as it is.
        </p>
      </ConfirmDialog>
      <ConfirmDialog
        open={cancelling}
        title="Cancel invocation"
        confirmLabel="Cancel invocation"
        danger
        onConfirm={async () => {
          unwrap(
            await workflow.raw.POST(
              '/api/v1/projects/{projectId}/workflow/invocations/{invocationId}/cancel',
              {
                params: { path: { projectId, invocationId: invocationId! } },
                body: reason.trim() ? { reason: reason.trim() } : {},
              },
            ),
          );
          invocation.reload();
        }}
        onClose={() => setCancelling(false)}
      >
        <p>
          Cancel this invocation? Every open stage closes, its owners are released and the run ends. This
          cannot be undone.
        </p>
        <label htmlFor="cancel-reason">Reason (optional)</label>
        <input
          id="cancel-reason"
          value={reason}
          maxLength={500}
          onChange={(e) => setReason(e.currentTarget.value)}
        />
      </ConfirmDialog>
    </ProjectFrame>
  );
}
