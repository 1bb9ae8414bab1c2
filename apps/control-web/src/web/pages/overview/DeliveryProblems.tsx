import { Link } from 'react-router';
import { APIError } from '@svc/sdk';
import type { HubApi } from '@svc/sdk';
import { unwrap } from '../../app/api';
import { usePolling } from '../../app/hooks';
import { useClients } from '../../app/session';
import { useWorkspace } from '../../app/workspace';
import { ProblemMessage } from '../../components/ProblemMessage';
import { ago, dateTime } from '../../components/time';
import { disabledReasonWords } from '../projects/deliveries/event-types';

type Project = HubApi.components['schemas']['Project'];

interface Problem {
  key: string;
  project: Project;
  at: string;
  kind: 'subscription_disabled' | 'attempts_exhausted';
  text: string;
}

const PER_PROJECT = 5;

/**
 * The operational events of deliveries, as they stand: subscriptions disabled automatically (410 Gone, or
 * retries used up five times in a row) and deliveries that used every retry, across the workspace's
 * projects, newest first, read again every 30 s. Each links to its project's deliveries.
 */
export function DeliveryProblems({ projects }: { projects: Project[] }) {
  const { workspace } = useWorkspace();
  const { workflow } = useClients();
  const ids = projects.map((p) => p.id).join(',');
  const problems = usePolling(
    async (signal) => {
      const perProject = await Promise.all(
        projects.map(async (project): Promise<Problem[]> => {
          const path = { projectId: project.id };
          const [subscriptions, failed] = await Promise.all([
            workflow.raw
              .GET('/api/v1/projects/{projectId}/workflow/delivery-subscriptions', {
                params: { path },
                signal,
              })
              .then(unwrap),
            workflow.raw
              .GET('/api/v1/projects/{projectId}/workflow/deliveries', {
                params: { path, query: { status: 'failed', limit: 50 } },
                signal,
              })
              .then(unwrap),
          ]);
          const urls = new Map(subscriptions.map((s) => [s.subscription_id, s.url]));
          const disabled = subscriptions
            .filter(
              (s) =>
                !s.is_active && (s.disabled_reason === 'gone' || s.disabled_reason === 'retries_exhausted'),
            )
            .map((s): Problem => ({
              key: s.subscription_id,
              project,
              at: s.updated_at,
              kind: 'subscription_disabled',
              text: `Subscription ${s.url} was disabled: ${disabledReasonWords(s.disabled_reason)}.`,
            }));
          const exhausted = failed
            .filter((d) => d.failure_reason === 'retries_exhausted')
            .slice(0, PER_PROJECT)
            .map((d): Problem => ({
              key: d.delivery_id,
              project,
              at: d.completed_at ?? d.created_at,
              kind: 'attempts_exhausted',
              text: `A ${d.event} delivery to ${urls.get(d.subscription_id) ?? 'a deleted subscription'} used every retry (${d.attempts} attempts, last answer ${d.last_status_code ?? 'none'}).`,
            }));
          return [...disabled, ...exhausted];
        }),
      );
      return perProject.flat().sort((a, b) => b.at.localeCompare(a.at));
    },
    30_000,
    [workspace.id, ids],
  );

  if (problems.error instanceof APIError && (problems.error.status === 401 || problems.error.status === 403))
    return null;
  return (
    <>
      <ProblemMessage error={problems.error} context="Deliveries could not be read" />
      {problems.data && problems.data.length === 0 && (
        <p>Deliveries are flowing: no subscription was disabled and no delivery ran out of retries.</p>
      )}
      {problems.data && problems.data.length > 0 && (
        <ul className="delivery-problems">
          {problems.data.map((p) => (
            <li key={p.key} data-kind={p.kind}>
              <span
                className={`badge ${p.kind === 'subscription_disabled' ? 'delivery-failed' : 'badge-warn'}`}
              >
                {p.kind === 'subscription_disabled' ? 'subscription disabled' : 'retries used up'}
              </span>{' '}
              {p.text} <span title={dateTime(p.at)}>{ago(p.at)}</span> in{' '}
              <Link to={`/w/${workspace.slug}/projects/${p.project.id}/deliveries`}>{p.project.name}</Link>
            </li>
          ))}
        </ul>
      )}
    </>
  );
}
