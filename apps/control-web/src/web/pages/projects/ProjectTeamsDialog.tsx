import { useState } from 'react';
import type { HubApi } from '@svc/sdk';
import { unwrap } from '../../app/api';
import { useApi } from '../../app/hooks';
import { useClients } from '../../app/session';
import { useWorkspace } from '../../app/workspace';
import { ConfirmDialog } from '../../components/ConfirmDialog';
import { ProblemMessage } from '../../components/ProblemMessage';

type Project = HubApi.components['schemas']['Project'];

/**
 * The teams assigned to a project (their agents work on its stages): each can be removed at once, and the
 * dialog's own action assigns the team chosen in the list.
 */
export function ProjectTeamsDialog({ project, onClose }: { project: Project; onClose: () => void }) {
  const { workspace } = useWorkspace();
  const { hub } = useClients();
  const [teamId, setTeamId] = useState('');
  const [removeError, setRemoveError] = useState<unknown>(undefined);
  const assigned = useApi(
    (signal) =>
      hub.raw
        .GET('/api/v1/projects/{projectId}/teams', { params: { path: { projectId: project.id } }, signal })
        .then(unwrap),
    [project.id],
  );
  const teams = useApi(
    (signal) =>
      hub.raw
        .GET('/api/v1/workspaces/{workspace}/teams', {
          params: { path: { workspace: workspace.id } },
          signal,
        })
        .then(unwrap),
    [workspace.id],
  );
  const active = (assigned.data ?? []).filter((a) => a.active);
  const assignable = (teams.data ?? []).filter((t) => !active.some((a) => a.team.id === t.id));

  return (
    <ConfirmDialog
      open
      title={`Teams of ${project.name} (${project.code})`}
      confirmLabel="Assign team"
      onConfirm={async () => {
        if (!teamId) throw new Error('Choose a team to assign.');
        unwrap(
          await hub.raw.POST('/api/v1/projects/{projectId}/teams', {
            params: { path: { projectId: project.id } },
            body: { team_id: teamId },
          }),
        );
      }}
      onClose={onClose}
    >
      <ProblemMessage error={assigned.error ?? teams.error} context="Teams could not be read" />
      {active.length === 0 ? (
        <p>No team is assigned: only agents of the project itself work on its stages.</p>
      ) : (
        <ul className="plain-list team-list" aria-label="Assigned teams">
          {active.map((a) => (
            <li key={a.team.id}>
              <span title={a.team.id}>{a.team.name}</span>{' '}
              <button
                type="button"
                aria-label={`Remove ${a.team.name}`}
                onClick={() => {
                  setRemoveError(undefined);
                  void hub.raw
                    .DELETE('/api/v1/projects/{projectId}/teams/{teamId}', {
                      params: { path: { projectId: project.id, teamId: a.team.id } },
                    })
                    .then(unwrap)
                    .then(() => assigned.reload())
                    .catch(setRemoveError);
                }}
              >
                Remove
              </button>
            </li>
          ))}
        </ul>
      )}
      <ProblemMessage error={removeError} context="The team was not removed" />
      <label htmlFor="assign-team">Assign a team</label>
      <select id="assign-team" value={teamId} onChange={(e) => setTeamId(e.currentTarget.value)}>
        <option value="">Choose a team</option>
        {assignable.map((t) => (
          <option key={t.id} value={t.id}>
            {t.name}
          </option>
        ))}
      </select>
    </ConfirmDialog>
  );
}
