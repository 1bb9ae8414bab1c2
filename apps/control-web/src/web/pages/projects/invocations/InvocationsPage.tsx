import { useState } from 'react';
import { Link, useSearchParams } from 'react-router';
import type { WorkflowApi } from '@svc/sdk';
import { unwrap } from '../../../app/api';
import { usePolling } from '../../../app/hooks';
import { useClients } from '../../../app/session';
import { Loading } from '../../../components/Loading';
import { ProblemMessage } from '../../../components/ProblemMessage';
import { ago } from '../../../components/time';
import { ProjectFrame, useProjectBase, useProjectId } from '../project';
import { CardTable } from '../../../components/CardTable';

type Schemas = WorkflowApi.components['schemas'];
type State = Schemas['InvocationsState'];
type Attention = Schemas['InvocationsAttention'];

const STATES: State[] = [
  'received',
  'launching',
  'running',
  'awaiting_approval',
  'waiting_for_artifact',
  'completed',
  'blocked',
  'failed',
  'cancelled',
];
const ATTENTIONS: Attention[] = [
  'none',
  'approval_required',
  'blocked',
  'stalled',
  'artifact_rejected',
  'failed',
  'owner_spawning',
];
const PAGE = 50;

/** The project's invocations, newest first, filtered by state, attention and creation day; live. */
export function InvocationsPage() {
  const projectId = useProjectId();
  const base = useProjectBase();
  const { workflow } = useClients();
  const [params, setParams] = useSearchParams();
  const state = params.get('state') as State | null;
  const attention = params.get('attention') as Attention | null;
  const since = params.get('since');
  const q = params.get('q');
  const [pages, setPages] = useState(1);
  const filter = (key: string, value: string) =>
    setParams(
      (p) => {
        const next = new URLSearchParams(p);
        if (value) next.set(key, value);
        else next.delete(key);
        return next;
      },
      { replace: true },
    );

  const list = usePolling(
    async (signal) => {
      const items = [];
      let cursor: string | undefined;
      let more = false;
      for (let page = 0; page < pages; page++) {
        const result = await workflow.raw.GET('/api/v1/projects/{projectId}/workflow/invocations', {
          params: {
            path: { projectId },
            query: {
              ...(state ? { state: [state] } : {}),
              ...(attention ? { attention: [attention] } : {}),
              ...(since ? { created_since: new Date(`${since}T00:00:00`).toISOString() } : {}),
              ...(q ? { q } : {}),
              limit: PAGE,
              ...(cursor ? { cursor } : {}),
            },
          },
          signal,
        });
        if (!result.data) unwrap(result);
        items.push(...result.data!.data);
        cursor = result.data!.next_cursor ?? undefined;
        more = cursor !== undefined;
        if (!more) break;
      }
      return { items, more };
    },
    5000,
    [projectId, state, attention, since, q, pages],
  );

  return (
    <ProjectFrame title="Invocations">
      <form className="filters" aria-label="Filter invocations" onSubmit={(e) => e.preventDefault()}>
        <div className="field">
          <label htmlFor="filter-q">Id or words of the intent</label>
          <input
            id="filter-q"
            type="search"
            defaultValue={q ?? ''}
            maxLength={200}
            onChange={(e) => filter('q', e.currentTarget.value.trim())}
          />
        </div>
        <div className="field">
          <label htmlFor="filter-state">State</label>
          <select
            id="filter-state"
            value={state ?? ''}
            onChange={(e) => filter('state', e.currentTarget.value)}
          >
            <option value="">Any</option>
            {STATES.map((s) => (
              <option key={s} value={s}>
                {s.replace(/_/g, ' ')}
              </option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor="filter-attention">Attention</label>
          <select
            id="filter-attention"
            value={attention ?? ''}
            onChange={(e) => filter('attention', e.currentTarget.value)}
          >
            <option value="">Any</option>
            {ATTENTIONS.map((a) => (
              <option key={a} value={a}>
                {a.replace(/_/g, ' ')}
              </option>
            ))}
          </select>
        </div>
        <div className="field">
          <label htmlFor="filter-since">Created since</label>
          <input
            id="filter-since"
            type="date"
            value={since ?? ''}
            onChange={(e) => filter('since', e.currentTarget.value)}
          />
        </div>
      </form>
      {list.loading && !list.data && <Loading what="Loading invocations" />}
      <ProblemMessage error={list.error} context="Invocations could not be loaded" />
      {list.data && list.data.items.length === 0 && (
        <p>
          No invocations{state || attention || since || q ? ' match these filters' : ' yet'}.{' '}
          <Link to={`${base}/intent`}>Try an intent</Link> to start one.
        </p>
      )}
      {list.data && list.data.items.length > 0 && (
        <CardTable>
          <caption className="visually-hidden">Invocations, newest first</caption>
          <thead>
            <tr>
              <th scope="col">Intent</th>
              <th scope="col">State</th>
              <th scope="col">Attention</th>
              <th scope="col">Template</th>
              <th scope="col">Created</th>
            </tr>
          </thead>
          <tbody>
            {list.data.items.map((inv) => (
              <tr key={inv.invocation_id}>
                <td>
                  <Link to={`${base}/invocations/${inv.invocation_id}`}>
                    {inv.intent.trim() ? inv.intent : <span className="muted">(no intent text) Open</span>}
                  </Link>
                  <div className="muted small">
                    <code>{inv.invocation_id}</code>
                    {inv.retry_of && <span className="badge">retry</span>}
                  </div>
                </td>
                <td>
                  <span className={`badge state-${inv.state}`}>{inv.state.replace(/_/g, ' ')}</span>
                </td>
                <td>
                  {inv.attention === 'none' ? (
                    <span className="muted">none</span>
                  ) : (
                    <span className="badge badge-warn" title={inv.attention_reason ?? undefined}>
                      {inv.attention.replace(/_/g, ' ')}
                    </span>
                  )}
                </td>
                <td>
                  {inv.route.matched ? (
                    <code>
                      {inv.route.template_key}@{inv.route.template_version}
                    </code>
                  ) : (
                    <span className="muted">no match</span>
                  )}
                </td>
                <td>{ago(inv.created_at)}</td>
              </tr>
            ))}
          </tbody>
        </CardTable>
      )}
      {list.data?.more && (
        <p>
          <button type="button" onClick={() => setPages((n) => n + 1)}>
            Show more
          </button>
        </p>
      )}
    </ProjectFrame>
  );
}
