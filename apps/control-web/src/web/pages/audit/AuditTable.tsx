import type { ReactNode } from 'react';
import type { HubApi } from '@svc/sdk';
import { CardTable } from '../../components/CardTable';
import { dateTime } from '../../components/time';
import type { AuditFilters } from './filters';

type AuditEvent = HubApi.components['schemas']['AuditEvent'];

/** A value that narrows the log to events like this one. */
function FilterLink({
  label,
  onClick,
  children,
}: {
  label: string;
  onClick: () => void;
  children: ReactNode;
}) {
  return (
    <button type="button" className="link-button" onClick={onClick} title={label} aria-label={label}>
      {children}
    </button>
  );
}

/** The events, newest first; action, actor and target each narrow the log when chosen. */
export function AuditTable({
  events,
  onFilter,
}: {
  events: AuditEvent[];
  onFilter: (field: keyof AuditFilters, value: string) => void;
}) {
  return (
    <CardTable wide className="audit-table">
      <caption className="visually-hidden">Audit events, newest first</caption>
      <thead>
        <tr>
          <th scope="col">When</th>
          <th scope="col">Action</th>
          <th scope="col">Actor</th>
          <th scope="col">Target</th>
          <th scope="col">Details</th>
        </tr>
      </thead>
      <tbody>
        {events.map((event) => (
          <tr key={event.id} data-action={event.action}>
            <td className="when">
              <time dateTime={event.created_at}>{dateTime(event.created_at)}</time>
            </td>
            <td>
              <FilterLink label={`Only ${event.action}`} onClick={() => onFilter('action', event.action)}>
                <code>{event.action}</code>
              </FilterLink>
            </td>
            <td>
              <span className="muted">{event.actor.kind.replace('_', ' ')}</span>{' '}
              {event.actor.id ? (
                <FilterLink
                  label={`Only events by ${event.actor.id}`}
                  onClick={() => onFilter('actor_id', event.actor.id ?? '')}
                >
                  <code>{event.actor.id}</code>
                </FilterLink>
              ) : null}
            </td>
            <td>
              {event.target ? (
                <>
                  <span className="muted">{event.target.type}</span>{' '}
                  {event.target.id ? (
                    <FilterLink
                      label={`Only events on ${event.target.id}`}
                      onClick={() => onFilter('target_id', event.target?.id ?? '')}
                    >
                      <code>{event.target.id}</code>
                    </FilterLink>
                  ) : null}
                </>
              ) : (
                '—'
              )}
            </td>
            <td>
              {Object.keys(event.data).length > 0 || event.request_id ? (
                <details>
                  <summary>Show</summary>
                  {event.request_id && (
                    <p className="muted">
                      request <code>{event.request_id}</code>
                    </p>
                  )}
                  <pre className="event-data">{JSON.stringify(event.data, null, 2)}</pre>
                </details>
              ) : (
                '—'
              )}
            </td>
          </tr>
        ))}
      </tbody>
    </CardTable>
  );
}
