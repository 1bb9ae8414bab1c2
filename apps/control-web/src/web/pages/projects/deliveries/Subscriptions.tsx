import { useId, useState } from 'react';
import type { WorkflowApi } from '@svc/sdk';
import { expectOk, unwrap } from '../../../app/api';
import type { ApiState } from '../../../app/hooks';
import { useClients } from '../../../app/session';
import { CardTable } from '../../../components/CardTable';
import { ConfirmDialog } from '../../../components/ConfirmDialog';
import { Loading } from '../../../components/Loading';
import { InputError, ProblemMessage } from '../../../components/ProblemMessage';
import { ago, dateTime } from '../../../components/time';
import { useProjectId } from '../project';
import { EVENT_TYPES, disabledReasonWords } from './event-types';
import type { DeliveryEventType } from './event-types';
import { SecretDialog } from './SecretDialog';

type Subscription = WorkflowApi.components['schemas']['DeliverySubscription'];
type TestResult = WorkflowApi.components['schemas']['DeliveryTestResult'];
type Pending =
  | { kind: 'create' }
  | { kind: 'rotate'; subscription: Subscription }
  | { kind: 'delete'; subscription: Subscription };

/**
 * The project's subscriptions. Owners and admins create them (the signing secret is shown once), send a test
 * event and see the receiver's answer, disable and enable, rotate the secret (shown once again) and delete.
 */
export function Subscriptions({
  subscriptions,
  canManage,
}: {
  subscriptions: ApiState<Subscription[]>;
  canManage: boolean;
}) {
  const projectId = useProjectId();
  const { workflow } = useClients();
  const [pending, setPending] = useState<Pending | undefined>(undefined);
  // The secret of the last creation or rotation, until the dialog showing it is closed.
  const [secret, setSecret] = useState<{ value: string; title: string } | undefined>(undefined);
  const [tests, setTests] = useState<Record<string, TestResult | 'sending'>>({});
  const [error, setError] = useState<unknown>(undefined);
  const [status, setStatus] = useState('');

  const path = { projectId };
  const setActive = async (s: Subscription, active: boolean) => {
    setError(undefined);
    try {
      unwrap(
        await workflow.raw.PATCH(
          '/api/v1/projects/{projectId}/workflow/delivery-subscriptions/{subscriptionId}',
          {
            params: { path: { ...path, subscriptionId: s.subscription_id } },
            body: { is_active: active },
          },
        ),
      );
      setStatus(`${active ? 'Enabled' : 'Disabled'} ${s.url}.`);
      subscriptions.reload();
    } catch (failure) {
      setError(failure);
    }
  };
  const sendTest = async (s: Subscription) => {
    setError(undefined);
    setTests((t) => ({ ...t, [s.subscription_id]: 'sending' }));
    try {
      const result = unwrap(
        await workflow.raw.POST(
          '/api/v1/projects/{projectId}/workflow/delivery-subscriptions/{subscriptionId}/test',
          {
            params: { path: { ...path, subscriptionId: s.subscription_id } },
          },
        ),
      );
      setTests((t) => ({ ...t, [s.subscription_id]: result }));
    } catch (failure) {
      setTests((t) => {
        const next = { ...t };
        delete next[s.subscription_id];
        return next;
      });
      setError(failure);
    }
  };

  return (
    <>
      {canManage && (
        <p>
          <button type="button" className="button-primary" onClick={() => setPending({ kind: 'create' })}>
            New subscription
          </button>
        </p>
      )}
      <p role="status" className="muted small">
        {status}
      </p>
      <ProblemMessage error={error} context="The subscription could not be changed" />
      <ProblemMessage error={subscriptions.error} context="Subscriptions could not be loaded" />
      {subscriptions.loading && !subscriptions.data && <Loading what="Loading subscriptions" />}
      {subscriptions.data && subscriptions.data.length === 0 && (
        <p className="muted">
          No subscriptions yet.{' '}
          {canManage
            ? 'Add one to have this project’s events sent to your server, signed.'
            : 'Owners and admins of the workspace add them.'}
        </p>
      )}
      {subscriptions.data && subscriptions.data.length > 0 && (
        <CardTable wide className="subscriptions">
          <caption className="visually-hidden">Delivery subscriptions of the project</caption>
          <thead>
            <tr>
              <th scope="col">Endpoint</th>
              <th scope="col">Events</th>
              <th scope="col">State</th>
              <th scope="col">Created</th>
              {canManage && <th scope="col">Actions</th>}
            </tr>
          </thead>
          <tbody>
            {subscriptions.data.map((s) => {
              const test = tests[s.subscription_id];
              return (
                <tr key={s.subscription_id} data-subscription={s.subscription_id}>
                  <td>
                    <code className="endpoint" title={s.subscription_id}>
                      {s.url}
                    </code>
                    {s.description && <div className="muted small">{s.description}</div>}
                  </td>
                  <td>
                    <ul className="event-list">
                      {s.events.map((e) => (
                        <li key={e}>
                          <code>{e}</code>
                        </li>
                      ))}
                    </ul>
                  </td>
                  <td>
                    {s.is_active ? (
                      <span className="badge badge-ok">active</span>
                    ) : (
                      <span className="badge delivery-failed" title={disabledReasonWords(s.disabled_reason)}>
                        disabled
                      </span>
                    )}
                    {!s.is_active && (
                      <div className="muted small">{disabledReasonWords(s.disabled_reason)}</div>
                    )}
                    {s.secret_rotation_ends_at && (
                      <div className="muted small">
                        Old secret signs too until {dateTime(s.secret_rotation_ends_at)}
                      </div>
                    )}
                  </td>
                  <td title={dateTime(s.created_at)}>{ago(s.created_at)}</td>
                  {canManage && (
                    <td>
                      <div className="row-actions">
                        <button type="button" onClick={() => void sendTest(s)} disabled={test === 'sending'}>
                          {test === 'sending' ? 'Sending…' : 'Send test event'}
                          <span className="visually-hidden"> to {s.url}</span>
                        </button>
                        <button type="button" onClick={() => void setActive(s, !s.is_active)}>
                          {s.is_active ? 'Disable' : 'Enable'}
                          <span className="visually-hidden"> {s.url}</span>
                        </button>
                        <button type="button" onClick={() => setPending({ kind: 'rotate', subscription: s })}>
                          Rotate secret<span className="visually-hidden"> of {s.url}</span>
                        </button>
                        <button
                          type="button"
                          className="button-danger"
                          onClick={() => setPending({ kind: 'delete', subscription: s })}
                        >
                          Delete<span className="visually-hidden"> {s.url}</span>
                        </button>
                      </div>
                      {test && test !== 'sending' && <TestOutcome result={test} />}
                    </td>
                  )}
                </tr>
              );
            })}
          </tbody>
        </CardTable>
      )}

      {canManage && (
        <>
          <CreateSubscriptionDialog
            open={pending?.kind === 'create'}
            onClose={() => setPending(undefined)}
            onCreated={(created) => {
              setSecret({ value: created.signing_secret, title: 'Subscription created' });
              setStatus(`Subscribed ${created.url}.`);
              subscriptions.reload();
            }}
          />
          <ConfirmDialog
            open={pending?.kind === 'rotate'}
            title="Rotate signing secret"
            confirmLabel="Rotate secret"
            onClose={() => setPending(undefined)}
            onConfirm={async () => {
              if (pending?.kind !== 'rotate') return;
              const rotated = unwrap(
                await workflow.raw.POST(
                  '/api/v1/projects/{projectId}/workflow/delivery-subscriptions/{subscriptionId}/rotate-secret',
                  {
                    params: { path: { ...path, subscriptionId: pending.subscription.subscription_id } },
                    body: {},
                  },
                ),
              );
              setSecret({ value: rotated.signing_secret, title: 'Secret rotated' });
              setStatus(`Rotated the secret of ${rotated.url}.`);
              subscriptions.reload();
            }}
          >
            <p>
              A new secret is made and shown once. For 24 hours every delivery to{' '}
              <code>{pending?.kind === 'rotate' ? pending.subscription.url : ''}</code> carries a signature
              with the old secret too, so the receiver can switch without losing one.
            </p>
          </ConfirmDialog>
          <ConfirmDialog
            open={pending?.kind === 'delete'}
            title="Delete subscription"
            confirmLabel="Delete subscription"
            danger
            onClose={() => setPending(undefined)}
            onConfirm={async () => {
              if (pending?.kind !== 'delete') return;
              expectOk(
                await workflow.raw.DELETE(
                  '/api/v1/projects/{projectId}/workflow/delivery-subscriptions/{subscriptionId}',
                  { params: { path: { ...path, subscriptionId: pending.subscription.subscription_id } } },
                ),
              );
              setStatus(`Deleted the subscription of ${pending.subscription.url}.`);
              subscriptions.reload();
            }}
          >
            <p>
              <code>{pending?.kind === 'delete' ? pending.subscription.url : ''}</code> gets no more events;
              its deliveries still waiting are skipped. Its delivery history is kept.
            </p>
          </ConfirmDialog>
          <SecretDialog
            secret={secret?.value}
            title={secret?.title ?? ''}
            onDone={() => setSecret(undefined)}
          />
        </>
      )}
    </>
  );
}

/** The receiver's answer to a test event: status, latency and the start of its body. */
function TestOutcome({ result }: { result: TestResult }) {
  return (
    <div className="test-outcome" data-testid="test-outcome">
      <p>
        Test event{' '}
        {result.succeeded ? (
          <span className="badge badge-ok">delivered</span>
        ) : (
          <span className="badge delivery-failed">not accepted</span>
        )}{' '}
        — answer {result.status_code ?? 'none'}
        {result.error ? ` (${result.error})` : ''} in {result.latency_ms} ms
      </p>
      {result.response_snippet && <pre className="answer-snippet">{result.response_snippet}</pre>}
    </div>
  );
}

type Created = WorkflowApi.components['schemas']['DeliverySubscriptionWithSecretResponse']['data'];

/** The form of a new subscription in a dialog: endpoint URL, events, description. */
function CreateSubscriptionDialog({
  open,
  onClose,
  onCreated,
}: {
  open: boolean;
  onClose: () => void;
  onCreated: (created: Created) => void;
}) {
  const projectId = useProjectId();
  const { workflow } = useClients();
  const ids = useId();
  const [url, setUrl] = useState('');
  const [description, setDescription] = useState('');
  const [events, setEvents] = useState<ReadonlySet<DeliveryEventType>>(
    new Set(['invocation.completed', 'invocation.failed']),
  );
  const toggle = (type: DeliveryEventType, on: boolean) =>
    setEvents((current) => {
      const next = new Set(current);
      if (on) next.add(type);
      else next.delete(type);
      return next;
    });
  return (
    <ConfirmDialog
      open={open}
      title="New subscription"
      confirmLabel="Create subscription"
      onClose={onClose}
      onConfirm={async () => {
        if (!url.trim()) throw new InputError('Enter the endpoint URL the events are sent to.');
        if (events.size === 0) throw new InputError('Choose at least one event to send.');
        const created = unwrap(
          await workflow.raw.POST('/api/v1/projects/{projectId}/workflow/delivery-subscriptions', {
            params: { path: { projectId } },
            body: {
              url: url.trim(),
              events: EVENT_TYPES.map((e) => e.type).filter((t) => events.has(t)),
              ...(description.trim() ? { description: description.trim() } : {}),
            },
          }),
        );
        setUrl('');
        setDescription('');
        onCreated(created);
      }}
    >
      <label htmlFor={`${ids}-url`}>Endpoint URL</label>
      <input
        id={`${ids}-url`}
        type="url"
        inputMode="url"
        required
        maxLength={2000}
        value={url}
        placeholder="https://example.com/hooks/svc"
        onChange={(e) => setUrl(e.target.value)}
        aria-describedby={`${ids}-url-help`}
      />
      <p id={`${ids}-url-help`} className="help">
        An HTTPS address of your server that answers 2xx. Addresses inside private networks are refused.
      </p>
      <fieldset>
        <legend>Events</legend>
        {EVENT_TYPES.map((e) => (
          <label key={e.type} className="checkbox">
            <input
              type="checkbox"
              checked={events.has(e.type)}
              onChange={(ev) => toggle(e.type, ev.target.checked)}
            />{' '}
            <code>{e.type}</code> <span className="muted small">{e.about}</span>
          </label>
        ))}
      </fieldset>
      <label htmlFor={`${ids}-description`}>Description (optional)</label>
      <input
        id={`${ids}-description`}
        maxLength={500}
        value={description}
        onChange={(e) => setDescription(e.target.value)}
      />
    </ConfirmDialog>
  );
}
