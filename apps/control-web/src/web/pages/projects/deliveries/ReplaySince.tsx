import { useId, useState } from 'react';
import type { FormEvent } from 'react';
import type { WorkflowApi } from '@svc/sdk';
import { unwrap } from '../../../app/api';
import { useClients } from '../../../app/session';
import { ConfirmDialog } from '../../../components/ConfirmDialog';
import { useProjectId } from '../project';

type Subscription = WorkflowApi.components['schemas']['DeliverySubscription'];
type ReplayStatus = 'failed' | 'succeeded' | 'skipped';

/** `yyyy-mm-ddThh:mm` of a local time, as `<input type="datetime-local">` takes it. */
function localInputValue(date: Date): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}T${pad(date.getHours())}:${pad(date.getMinutes())}`;
}

/**
 * Sends again every delivery created since a time (by default the failed ones), for one subscription or all,
 * after a confirmation that says how the choice reads. Owners and admins only.
 */
export function ReplaySince({
  subscriptions,
  onReplayed,
}: {
  subscriptions: Subscription[];
  onReplayed: () => void;
}) {
  const projectId = useProjectId();
  const { workflow } = useClients();
  const ids = useId();
  const [since, setSince] = useState(() => localInputValue(new Date(Date.now() - 3_600_000)));
  const [subscriptionId, setSubscriptionId] = useState('');
  const [statuses, setStatuses] = useState<ReadonlySet<ReplayStatus>>(new Set(['failed']));
  const [confirming, setConfirming] = useState(false);
  const [result, setResult] = useState('');
  const [invalid, setInvalid] = useState('');
  const sinceDate = new Date(since);

  const submit = (event: FormEvent) => {
    event.preventDefault();
    setResult('');
    if (!since || Number.isNaN(sinceDate.getTime())) return setInvalid('Choose the time to replay from.');
    if (statuses.size === 0) return setInvalid('Choose at least one status to send again.');
    setInvalid('');
    setConfirming(true);
  };
  const toggle = (status: ReplayStatus, on: boolean) =>
    setStatuses((current) => {
      const next = new Set(current);
      if (on) next.add(status);
      else next.delete(status);
      return next;
    });

  return (
    <form className="replay-form" onSubmit={submit} aria-labelledby={`${ids}-title`}>
      <h3 id={`${ids}-title`}>Replay since a time</h3>
      <div className="replay-fields">
        <div>
          <label htmlFor={`${ids}-since`}>Created since</label>
          <input
            id={`${ids}-since`}
            type="datetime-local"
            value={since}
            onChange={(e) => setSince(e.target.value)}
            aria-invalid={invalid.startsWith('Choose the time') || undefined}
          />
        </div>
        <div>
          <label htmlFor={`${ids}-subscription`}>Subscription</label>
          <select
            id={`${ids}-subscription`}
            value={subscriptionId}
            onChange={(e) => setSubscriptionId(e.target.value)}
          >
            <option value="">Every active subscription</option>
            {subscriptions.map((s) => (
              <option key={s.subscription_id} value={s.subscription_id}>
                {s.description ? `${s.description} (${s.url})` : s.url}
              </option>
            ))}
          </select>
        </div>
      </div>
      <fieldset>
        <legend>Send again the deliveries that</legend>
        {(
          [
            ['failed', 'failed'],
            ['succeeded', 'succeeded'],
            ['skipped', 'were skipped'],
          ] as const
        ).map(([status, words]) => (
          <label key={status} className="checkbox">
            <input
              type="checkbox"
              checked={statuses.has(status)}
              onChange={(e) => toggle(status, e.target.checked)}
            />{' '}
            {words}
          </label>
        ))}
      </fieldset>
      {invalid && (
        <p className="field-error" role="alert">
          {invalid}
        </p>
      )}
      <button type="submit">Replay…</button>{' '}
      <span role="status" className="muted small">
        {result}
      </span>
      <ConfirmDialog
        open={confirming}
        title="Replay deliveries"
        confirmLabel="Replay deliveries"
        onClose={() => setConfirming(false)}
        onConfirm={async () => {
          const answer = unwrap(
            await workflow.raw.POST('/api/v1/projects/{projectId}/workflow/deliveries/replay', {
              params: { path: { projectId } },
              body: {
                since: sinceDate.toISOString(),
                statuses: (['failed', 'succeeded', 'skipped'] as const).filter((s) => statuses.has(s)),
                ...(subscriptionId ? { subscription_id: subscriptionId } : {}),
              },
            }),
          );
          setResult(
            answer.replayed === 0
              ? 'Nothing to replay in that range.'
              : `${answer.replayed} ${answer.replayed === 1 ? 'delivery is' : 'deliveries are'} queued again.`,
          );
          onReplayed();
        }}
      >
        <p>
          Every {[...statuses].join(' or ')} delivery created since {sinceDate.toLocaleString()}
          {subscriptionId ? ' for the chosen subscription' : ''} gets a new attempt now, with the same
          delivery id. Receivers that deduplicate on that id are safe.
        </p>
      </ConfirmDialog>
    </form>
  );
}
