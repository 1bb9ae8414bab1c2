import { useState } from 'react';
import type { ReactNode } from 'react';
import type { WorkflowApi } from '@svc/sdk';
import { unwrap } from '../../../app/api';
import { useApi, usePolling } from '../../../app/hooks';
import { useClients } from '../../../app/session';
import { Loading } from '../../../components/Loading';
import { ProblemMessage } from '../../../components/ProblemMessage';
import { ago, dateTime } from '../../../components/time';
import { useCanEdit, useProjectId } from '../project';
import { CardTable } from '../../../components/CardTable';

type Delivery = WorkflowApi.components['schemas']['Delivery'];

/** The invocation's event deliveries to the project's subscriptions: status, attempts, and a new attempt on demand. */
export function Deliveries({ invocationId, live }: { invocationId: string; live: boolean }) {
  const projectId = useProjectId();
  const { workflow } = useClients();
  const [open, setOpen] = useState<string | undefined>(undefined);
  const [replayed, setReplayed] = useState(0);
  const deliveries = usePolling(
    (signal) =>
      workflow.raw
        .GET('/api/v1/projects/{projectId}/workflow/deliveries', {
          params: { path: { projectId }, query: { invocation_id: invocationId, limit: 100 } },
          signal,
        })
        .then(unwrap),
    live ? 3000 : 5000,
    [projectId, invocationId, replayed],
  );
  if (deliveries.loading && !deliveries.data) return <Loading what="Loading deliveries" />;
  return (
    <>
      <ProblemMessage error={deliveries.error} context="Deliveries could not be loaded" />
      {deliveries.data && deliveries.data.length === 0 && (
        <p className="muted">
          No deliveries yet. The project's subscriptions get this invocation's events when it completes,
          fails, waits for its artifact or is cancelled.
        </p>
      )}
      {deliveries.data && deliveries.data.length > 0 && (
        <CardTable wide className="deliveries">
          <caption className="visually-hidden">Deliveries of the invocation</caption>
          <thead>
            <tr>
              <th scope="col">Event</th>
              <th scope="col">Status</th>
              <th scope="col">Attempts</th>
              <th scope="col">Last answer</th>
              <th scope="col">Created</th>
              <th scope="col">Details</th>
            </tr>
          </thead>
          <tbody>
            {deliveries.data.map((d) => (
              <DeliveryRow
                key={d.delivery_id}
                delivery={d}
                open={open === d.delivery_id}
                onToggle={() => setOpen(open === d.delivery_id ? undefined : d.delivery_id)}
                onReplayed={() => setReplayed((n) => n + 1)}
              />
            ))}
          </tbody>
        </CardTable>
      )}
    </>
  );
}

function DeliveryRow({
  delivery: d,
  open,
  onToggle,
  onReplayed,
}: {
  delivery: Delivery;
  open: boolean;
  onToggle: () => void;
  onReplayed: () => void;
}) {
  return (
    <DeliveryRowWithAttempts delivery={d} open={open} onToggle={onToggle} onReplayed={onReplayed}>
      <td>
        <code>{d.event}</code>
      </td>
      <td>
        <span className={`badge delivery-${d.status}`}>{d.status}</span>
      </td>
      <td>{d.attempts}</td>
      <td>{d.last_status_code ?? '—'}</td>
      <td>{ago(d.created_at)}</td>
    </DeliveryRowWithAttempts>
  );
}

/**
 * One delivery in a six-column table: the caller's five cells, a "Show attempts" toggle, and under it (when
 * open) the delivery's attempts with the resend action. The invocation page and the Deliveries page share it.
 */
export function DeliveryRowWithAttempts({
  delivery: d,
  open,
  onToggle,
  onReplayed,
  children,
}: {
  delivery: Delivery;
  open: boolean;
  onToggle: () => void;
  onReplayed: () => void;
  children: ReactNode;
}) {
  return (
    <>
      <tr data-delivery={d.delivery_id}>
        {children}
        <td>
          <button type="button" aria-expanded={open} onClick={onToggle}>
            {open ? 'Hide attempts' : 'Show attempts'}
            <span className="visually-hidden"> of {d.event}</span>
          </button>
        </td>
      </tr>
      {open && (
        <tr className="delivery-detail">
          <td colSpan={6}>
            <DeliveryDetail deliveryId={d.delivery_id} attempts={d.attempts} onReplayed={onReplayed} />
          </td>
        </tr>
      )}
    </>
  );
}

export function DeliveryDetail({
  deliveryId,
  attempts,
  onReplayed,
}: {
  deliveryId: string;
  attempts: number;
  onReplayed: () => void;
}) {
  const projectId = useProjectId();
  const canEdit = useCanEdit();
  const { workflow } = useClients();
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const [queued, setQueued] = useState(false);
  const detail = useApi(
    (signal) =>
      workflow.raw
        .GET('/api/v1/projects/{projectId}/workflow/deliveries/{deliveryId}', {
          params: { path: { projectId, deliveryId } },
          signal,
        })
        .then(unwrap),
    [projectId, deliveryId, attempts],
  );
  const replay = async () => {
    setBusy(true);
    setError(undefined);
    try {
      unwrap(
        await workflow.raw.POST('/api/v1/projects/{projectId}/workflow/deliveries/{deliveryId}/redeliver', {
          params: { path: { projectId, deliveryId } },
        }),
      );
      setQueued(true);
      onReplayed();
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };
  return (
    <div className="delivery-attempts">
      {detail.loading && !detail.data && <Loading what="Loading attempts" />}
      <ProblemMessage error={detail.error} context="The delivery could not be loaded" />
      {detail.data && (
        <CardTable wide>
          <caption>
            Attempts of delivery <code>{deliveryId}</code>
          </caption>
          <thead>
            <tr>
              <th scope="col">#</th>
              <th scope="col">Trigger</th>
              <th scope="col">Started</th>
              <th scope="col">Status</th>
              <th scope="col">Latency</th>
              <th scope="col">Error</th>
              <th scope="col">Receiver's answer</th>
            </tr>
          </thead>
          <tbody>
            {detail.data.attempt_log.map((a) => (
              <tr key={a.attempt}>
                <td>{a.attempt}</td>
                <td>{a.trigger}</td>
                <td>{dateTime(a.started_at)}</td>
                <td>{a.status_code ?? '—'}</td>
                <td>{a.latency_ms} ms</td>
                <td>{a.error ?? '—'}</td>
                <td>
                  {a.response_snippet ? <pre className="answer-snippet">{a.response_snippet}</pre> : '—'}
                </td>
              </tr>
            ))}
          </tbody>
        </CardTable>
      )}
      {canEdit && (
        <p>
          <button type="button" onClick={() => void replay()} disabled={busy}>
            {busy ? 'Replaying…' : 'Replay delivery'}
          </button>{' '}
          <span role="status" className="muted small">
            {queued ? 'A new attempt is queued; it appears above within seconds.' : ''}
          </span>
        </p>
      )}
      <ProblemMessage error={error} context="The delivery could not be replayed" />
    </div>
  );
}
