import { useEffect, useId, useState } from 'react';
import type { FormEvent } from 'react';
import type { WorkflowApi } from '@svc/sdk';
import { unwrap } from '../../../app/api';
import { useApi } from '../../../app/hooks';
import { MANAGERS, roleAllows } from '../../../app/roles';
import { useClients } from '../../../app/session';
import { useWorkspace } from '../../../app/workspace';
import { Loading } from '../../../components/Loading';
import { ProblemMessage } from '../../../components/ProblemMessage';
import { ProjectFrame, useProjectId } from '../project';
import '../../settings-spawn/spawn-policy.css';
import { SaveFooter } from '../../../components/SaveFooter';

type RunLimits = WorkflowApi.components['schemas']['RunLimits'];
type RunLimitsPatch = WorkflowApi.components['schemas']['RunLimitsPatch'];

/** A limit field: blank is no limit; anything else is sent as typed (the Workflow API checks it). */
const limitOf = (text: string): number | null => (text.trim() === '' ? null : Number(text));
const shown = (limit: number | null) => (limit === null ? '' : String(limit));

/**
 * The project's and its workspace's run limits: how many runs may be in progress at once. Everyone reads them
 * with the runs in progress and the launches waiting; owners and admins change them (audited
 * `run_limits.changed`).
 */
export function RunLimitsPage() {
  const projectId = useProjectId();
  const { role } = useWorkspace();
  const { workflow } = useClients();
  const path = { projectId };
  const limits = useApi(
    (signal) =>
      workflow.raw
        .GET('/api/v1/projects/{projectId}/workflow/run-limits', { params: { path }, signal })
        .then(unwrap),
    [projectId],
  );
  return (
    <ProjectFrame title="Run limits">
      <p className="muted">
        How many runs may be in progress at once. A launch over a limit is not refused: it waits in line and
        its run starts when another one ends.
      </p>
      <ProblemMessage error={limits.error} context="The run limits could not be loaded" />
      {!limits.data ? (
        !limits.error && <Loading what="Loading the run limits" />
      ) : (
        <LimitsForm
          limits={limits.data}
          editable={roleAllows(role, MANAGERS)}
          onSave={async (body) => {
            const saved = await workflow.raw
              .PATCH('/api/v1/projects/{projectId}/workflow/run-limits', { params: { path }, body })
              .then(unwrap);
            limits.reload();
            return saved;
          }}
        />
      )}
    </ProjectFrame>
  );
}

function LimitsForm(props: {
  limits: RunLimits;
  editable: boolean;
  onSave: (body: RunLimitsPatch) => Promise<RunLimits>;
}) {
  const { limits, editable } = props;
  const ids = { project: useId(), workspace: useId() };
  const [project, setProject] = useState(shown(limits.project_max_runs_in_progress));
  const [workspace, setWorkspace] = useState(shown(limits.workspace_max_runs_in_progress));
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const [saved, setSaved] = useState<string>();
  useEffect(() => setSaved(undefined), [project, workspace]);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      const result = await props.onSave({
        project_max_runs_in_progress: limitOf(project),
        workspace_max_runs_in_progress: limitOf(workspace),
      });
      const say = (n: number | null) => (n === null ? 'no limit' : `${n} at once`);
      setSaved(
        `Saved: project ${say(result.project_max_runs_in_progress)}, workspace ${say(result.workspace_max_runs_in_progress)}.`,
      );
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };

  return (
    <form className="policy-form" onSubmit={(e) => void submit(e)}>
      <p data-testid="runs-in-progress">
        In progress now: {limits.project_runs_in_progress} in this project,{' '}
        {limits.workspace_runs_in_progress} in the workspace; {limits.queued} waiting for a slot.
      </p>
      <fieldset disabled={!editable || busy}>
        <legend className="visually-hidden">Run limits</legend>
        <div className="form-grid">
          <label htmlFor={ids.project}>Most runs at once in this project</label>
          <input
            id={ids.project}
            type="number"
            min={1}
            max={10000}
            value={project}
            placeholder="no limit"
            onChange={(e) => setProject(e.target.value)}
          />
          <label htmlFor={ids.workspace}>Most runs at once in the workspace</label>
          <input
            id={ids.workspace}
            type="number"
            min={1}
            max={10000}
            value={workspace}
            placeholder="no limit"
            onChange={(e) => setWorkspace(e.target.value)}
          />
        </div>
      </fieldset>
      <SaveFooter
        editable={editable}
        busy={busy}
        label="Save limits"
        readOnly="Only owners and admins change the run limits."
        saved={saved}
        error={error}
        errorContext="The limits were not saved"
      />
    </form>
  );
}
