import { useState } from 'react';
import type { WorkflowApi } from '@svc/sdk';
import { unwrap } from '../../../app/api';
import { usePolling } from '../../../app/hooks';
import { MANAGERS, roleAllows } from '../../../app/roles';
import { useClients } from '../../../app/session';
import { useWorkspace } from '../../../app/workspace';
import { CardTable } from '../../../components/CardTable';
import { Loading } from '../../../components/Loading';
import { ProblemMessage } from '../../../components/ProblemMessage';
import { ago, dateTime } from '../../../components/time';
import { DeliveryRowWithAttempts } from '../invocations/Deliveries';
import { ProjectFrame, useProjectBase, useProjectId } from '../project';
import { ReplaySince } from './ReplaySince';
import { Subscriptions } from './Subscriptions';
import { Link } from 'react-router';

type Delivery = WorkflowApi.components['schemas']['Delivery'];
type DeliveryStatus = WorkflowApi.components['schemas']['DeliveryStatus'];

const FAILURE_WORDS: Record<string, string> = {
  retries_exhausted: 'every retry used',
  stopped_by_receiver: 'the receiver said stop',
  gone: 'the endpoint is gone (410)',
  attempt_failed: 'the last attempt failed',
};

/**
 * The project's deliveries, like an app portal: subscriptions (managed by owners and admins, the secret shown
 * once), every delivery with its attempts (status, latency, the receiver's answer) and a resend, and a replay
 * of everything since a time.
 */
export function DeliveriesPage() {
  const projectId = useProjectId();
  const { role } = useWorkspace();
  const { workflow } = useClients();
  const canManage = roleAllows(role, MANAGERS);
  const [status, setStatus] = useState<DeliveryStatus | ''>('');
  const [open, setOpen] = useState<string | undefined>(undefined);
  const [generation, setGeneration] = useState(0);
  const subscriptions = usePolling(
    (signal) =>
      workflow.raw
        .GET('/api/v1/projects/{projectId}/workflow/delivery-subscriptions', {
          params: { path: { projectId } },
          signal,
        })
        .then(unwrap),
    15_000,
    [projectId],
  );
  const deliveries = usePolling(
    (signal) =>
      workflow.raw
        .GET('/api/v1/projects/{projectId}/workflow/deliveries', {
          params: { path: { projectId }, query: { limit: 50, ...(status ? { status } : {}) } },
          signal,
        })
        .then(unwrap),
    5000,
    [projectId, status, generation],
  );
  const base = useProjectBase();
  const urlOf = (subscriptionId: string) =>
    subscriptions.data?.find((s) => s.subscription_id === subscriptionId)?.url;

  return (
    <ProjectFrame title="Deliveries">
      <div className="page-deliveries">
        <h2>Subscriptions</h2>
        <Subscriptions subscriptions={subscriptions} canManage={canManage} />

        <h2>Deliveries</h2>
        <div className="filters">
          <label htmlFor="delivery-status">Status</label>
          <select
            id="delivery-status"
            value={status}
            onChange={(e) => setStatus(e.target.value as DeliveryStatus | '')}
          >
            <option value="">Any</option>
            <option value="pending">pending</option>
            <option value="succeeded">succeeded</option>
            <option value="failed">failed</option>
            <option value="skipped">skipped</option>
          </select>
        </div>
        <ProblemMessage error={deliveries.error} context="Deliveries could not be loaded" />
        {deliveries.loading && !deliveries.data && <Loading what="Loading deliveries" />}
        {deliveries.data && deliveries.data.length === 0 && (
          <p className="muted">No deliveries{status ? ` ${status}` : ''} yet.</p>
        )}
        {deliveries.data && deliveries.data.length > 0 && (
          <CardTable wide className="deliveries">
            <caption className="visually-hidden">Deliveries of the project, newest first</caption>
            <thead>
              <tr>
                <th scope="col">Event</th>
                <th scope="col">Endpoint</th>
                <th scope="col">Status</th>
                <th scope="col">Attempts</th>
                <th scope="col">Created</th>
                <th scope="col">Details</th>
              </tr>
            </thead>
            <tbody>
              {deliveries.data.map((d: Delivery) => (
                <DeliveryRows
                  key={d.delivery_id}
                  delivery={d}
                  endpoint={urlOf(d.subscription_id)}
                  invocationLink={`${base}/invocations/${d.invocation_id}`}
                  open={open === d.delivery_id}
                  onToggle={() => setOpen(open === d.delivery_id ? undefined : d.delivery_id)}
                  onResent={() => setGeneration((g) => g + 1)}
                />
              ))}
            </tbody>
          </CardTable>
        )}

        {canManage && subscriptions.data && (
          <ReplaySince subscriptions={subscriptions.data} onReplayed={() => setGeneration((g) => g + 1)} />
        )}
      </div>
    </ProjectFrame>
  );
}

function DeliveryRows({
  delivery: d,
  endpoint,
  invocationLink,
  open,
  onToggle,
  onResent,
}: {
  delivery: Delivery;
  endpoint: string | undefined;
  invocationLink: string;
  open: boolean;
  onToggle: () => void;
  onResent: () => void;
}) {
  return (
    <DeliveryRowWithAttempts delivery={d} open={open} onToggle={onToggle} onReplayed={onResent}>
      <td>
        <code>{d.event}</code>
        <div className="small">
          <Link to={invocationLink}>Invocation</Link>
        </div>
      </td>
      <td>
        <code className="endpoint" title={d.subscription_id}>
          {endpoint ?? 'deleted subscription'}
        </code>
      </td>
      <td>
        <span className={`badge delivery-${d.status}`}>{d.status}</span>
        {d.failure_reason && <div className="muted small">{FAILURE_WORDS[d.failure_reason]}</div>}
      </td>
      <td>
        {d.attempts}
        {d.last_status_code !== null && <span className="muted small"> (last {d.last_status_code})</span>}
      </td>
      <td title={dateTime(d.created_at)}>{ago(d.created_at)}</td>
    </DeliveryRowWithAttempts>
  );
}
