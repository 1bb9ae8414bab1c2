import { useEffect, useState } from 'react';
import { useSearchParams } from 'react-router';
import type { HubApi } from '@svc/sdk';
import { unwrap } from '../../app/api';
import { useClients } from '../../app/session';
import { useWorkspace } from '../../app/workspace';
import { Loading } from '../../components/Loading';
import { ProblemMessage } from '../../components/ProblemMessage';
import { AuditFilterForm } from './AuditFilterForm';
import { AuditTable } from './AuditTable';
import { filterErrors, filtersFrom, paramsFrom, queryFrom } from './filters';
import type { AuditFilters, AuditQuery } from './filters';
import './audit.css';

type AuditEvent = HubApi.components['schemas']['AuditEvent'];
type AuditPage = HubApi.components['schemas']['AuditEventPage'];

const PAGE_SIZE = 50;

interface Listing {
  key: string;
  events: AuditEvent[];
  next: string | null;
  loading: boolean;
  error: unknown;
}

/**
 * Audit log: the workspace's events, newest first, filtered by action, actor, target and time (the filters are
 * in the address), fifty at a time with "Show older events" following the hub's cursor.
 */
export function AuditPage() {
  const { workspace } = useWorkspace();
  const { hub } = useClients();
  const [params, setParams] = useSearchParams();
  const filters = filtersFrom(params);
  const errors = filterErrors(filters);
  const valid = Object.keys(errors).length === 0;
  const key = `${workspace.id}?${paramsFrom(filters).toString()}`;
  const [generation, setGeneration] = useState(0);
  const [listing, setListing] = useState<Listing>({
    key: '',
    events: [],
    next: null,
    loading: true,
    error: undefined,
  });

  const fetchPage = (query: AuditQuery, signal?: AbortSignal): Promise<AuditPage> =>
    hub.raw
      .GET('/api/v1/workspaces/{workspace}/audit-events', {
        params: { path: { workspace: workspace.id }, query: { ...query, limit: PAGE_SIZE } },
        ...(signal ? { signal } : {}),
      })
      .then((result) => unwrap({ ...result, data: result.data ? { data: result.data } : undefined }));

  useEffect(() => {
    if (!valid) return;
    const controller = new AbortController();
    setListing({ key, events: [], next: null, loading: true, error: undefined });
    fetchPage(queryFrom(filters), controller.signal).then(
      (page) =>
        setListing({ key, events: page.data, next: page.next_cursor, loading: false, error: undefined }),
      (error: unknown) => {
        if (!controller.signal.aborted) setListing({ key, events: [], next: null, loading: false, error });
      },
    );
    return () => controller.abort();
    // The key stands for the workspace and every filter.
  }, [key, valid, generation]);

  const older = async () => {
    if (!listing.next) return;
    const at = listing.key;
    setListing((l) => ({ ...l, loading: true, error: undefined }));
    try {
      const page = await fetchPage({ ...queryFrom(filters), cursor: listing.next });
      setListing((l) =>
        l.key === at
          ? { ...l, events: [...l.events, ...page.data], next: page.next_cursor, loading: false }
          : l,
      );
    } catch (error) {
      setListing((l) => (l.key === at ? { ...l, loading: false, error } : l));
    }
  };

  const apply = (next: AuditFilters) => setParams(paramsFrom(next));
  const current = listing.key === key;

  return (
    <section aria-labelledby="page-title" className="page-audit">
      <h1 id="page-title">Audit log</h1>
      <p className="muted">
        Security-relevant actions in {workspace.name}: keys, members, credentials, runtime hosts, agents,
        projects. Events are never changed or removed and never hold a secret.
      </p>
      <AuditFilterForm filters={filters} errors={errors} onApply={apply} onClear={() => setParams({})} />
      <div className="list-head">
        <p role="status" className="muted">
          {current && !listing.loading
            ? `${listing.events.length}${listing.next ? '+' : ''} ${listing.events.length === 1 ? 'event' : 'events'}`
            : ''}
        </p>
        <button type="button" onClick={() => setGeneration((g) => g + 1)} disabled={!valid}>
          Refresh
        </button>
      </div>
      <ProblemMessage error={current ? listing.error : undefined} context="The audit log could not be read" />
      {valid && (!current || (listing.loading && listing.events.length === 0)) && (
        <Loading what="Reading the audit log" />
      )}
      {current && !listing.loading && !listing.error && listing.events.length === 0 && (
        <p>No events match these filters.</p>
      )}
      {current && listing.events.length > 0 && (
        <AuditTable
          events={listing.events}
          onFilter={(field, value) => apply({ ...filters, [field]: value })}
        />
      )}
      {current && listing.next && (
        <button type="button" onClick={() => void older()} disabled={listing.loading}>
          {listing.loading ? 'Loading…' : 'Show older events'}
        </button>
      )}
    </section>
  );
}
