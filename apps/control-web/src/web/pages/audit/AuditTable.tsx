import { Fragment } from 'react';
import type { ReactNode } from 'react';
import type { HubApi } from '@svc/sdk';
import { useNameOf } from '../../app/names';
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

/** A dotted action name that may break after its dots and underscores, never inside a word. */
function ActionName({ action }: { action: string }) {
  const parts = action.split(/(?<=[._])/);
  return (
    <code className="action">
      {parts.map((part, index) => (
        <Fragment key={index}>
          {part}
          {index < parts.length - 1 && <wbr />}
        </Fragment>
      ))}
    </code>
  );
}

/** What the actor kinds and target types are called for a person. */
const KIND_WORDS: Record<string, string> = {
  participant: 'person',
  api_key: 'API key',
  agent: 'agent',
  service: 'service',
  anonymous: 'anonymous',
  relay: 'relay',
  runtime_host: 'runtime host',
  project: 'project',
  team: 'team',
};
const kindWords = (kind: string) => KIND_WORDS[kind] ?? kind.replace(/_/g, ' ');

/**
 * The events, newest first; action, actor and target each narrow the log when chosen. People, keys,
 * agents, projects and teams are shown by name, their ids on hover and in the details.
 */
export function AuditTable({
  events,
  onFilter,
}: {
  events: AuditEvent[];
  onFilter: (field: keyof AuditFilters, value: string) => void;
}) {
  const nameOf = useNameOf();
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
                <ActionName action={event.action} />
              </FilterLink>
            </td>
            <td>
              <span className="muted">{kindWords(event.actor.kind)}</span>{' '}
              {event.actor.id ? (
                <FilterLink
                  label={`Only events by ${nameOf(event.actor.id)?.name ?? event.actor.id}`}
                  onClick={() => onFilter('actor_id', event.actor.id ?? '')}
                >
                  <Who id={event.actor.id} name={nameOf(event.actor.id)?.name} />
                </FilterLink>
              ) : null}
            </td>
            <td>
              {event.target ? (
                <>
                  <span className="muted">{kindWords(event.target.type)}</span>{' '}
                  {event.target.id ? (
                    <FilterLink
                      label={`Only events on ${nameOf(event.target.id)?.name ?? event.target.id}`}
                      onClick={() => onFilter('target_id', event.target?.id ?? '')}
                    >
                      <Who id={event.target.id} name={nameOf(event.target.id)?.name} />
                    </FilterLink>
                  ) : null}
                </>
              ) : (
                '—'
              )}
            </td>
            <td>
              {Object.keys(event.data).length > 0 ||
              event.request_id ||
              event.actor.id ||
              event.target?.id ? (
                <details>
                  <summary>Show</summary>
                  <dl className="event-ids">
                    {event.actor.id && (
                      <>
                        <dt>Actor id</dt>
                        <dd>
                          <code>{event.actor.id}</code>
                        </dd>
                      </>
                    )}
                    {event.target?.id && (
                      <>
                        <dt>Target id</dt>
                        <dd>
                          <code>{event.target.id}</code>
                        </dd>
                      </>
                    )}
                    {event.request_id && (
                      <>
                        <dt>Request</dt>
                        <dd>
                          <code>{event.request_id}</code>
                        </dd>
                      </>
                    )}
                  </dl>
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

/** A name with its id on hover, or the id itself when the workspace does not name it. */
function Who({ id, name }: { id: string; name: string | undefined }) {
  if (!name) return <code className="id">{id}</code>;
  return <span title={id}>{name}</span>;
}
