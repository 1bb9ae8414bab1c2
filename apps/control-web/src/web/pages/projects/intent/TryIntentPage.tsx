import { useState } from 'react';
import { useNavigate } from 'react-router';
import type { WorkflowApi } from '@svc/sdk';
import { unwrap } from '../../../app/api';
import { useClients } from '../../../app/session';
import { ProblemMessage } from '../../../components/ProblemMessage';
import { ProjectFrame, useCanEdit, useProjectBase, useProjectId } from '../project';
import { Blockers } from '../invocations/Blockers';
import { Explanation } from './Explanation';

type Schemas = WorkflowApi.components['schemas'];
type Result = { resolve: Schemas['ContractsResolveResult']; preflight: Schemas['InvocationsPreflight'] };

const OUTCOME: Record<Schemas['InvocationsLaunchOutcome'], string> = {
  accepted: 'A launch now would start the run and give every stage an owner at once.',
  accepted_waiting_for_owner:
    'A launch now would be accepted; the run waits until an agent can own its stage.',
  refused: 'A launch now would be refused until the blockers marked “refuses launch” are fixed.',
};

/**
 * Try an intent: resolve's full explanation (every contract considered and each criterion, the winning rule,
 * model assistance when the project asked its model) and preflight's readiness with its blockers and their
 * recommended actions. Nothing is created until “Invoke and launch”.
 */
export function TryIntentPage() {
  const projectId = useProjectId();
  const base = useProjectBase();
  const canEdit = useCanEdit();
  const navigate = useNavigate();
  const { workflow } = useClients();
  const [intent, setIntent] = useState('');
  const [capabilities, setCapabilities] = useState('');
  const [result, setResult] = useState<Result | undefined>(undefined);
  const [error, setError] = useState<unknown>(undefined);
  const [busy, setBusy] = useState<'try' | 'invoke' | undefined>(undefined);

  const request = () => {
    const caps = capabilities
      .split(/[,\s]+/)
      .map((c) => c.trim())
      .filter(Boolean);
    return { intent, ...(caps.length > 0 ? { required_capabilities: caps } : {}) };
  };

  const tryIt = async () => {
    setBusy('try');
    setError(undefined);
    try {
      const path = { params: { path: { projectId } }, body: request() };
      const [resolve, preflight] = await Promise.all([
        workflow.raw.POST('/api/v1/projects/{projectId}/workflow/resolve-intent', path).then(unwrap),
        workflow.raw.POST('/api/v1/projects/{projectId}/workflow/preflight', path).then(unwrap),
      ]);
      setResult({ resolve, preflight });
    } catch (failure) {
      setResult(undefined);
      setError(failure);
    } finally {
      setBusy(undefined);
    }
  };

  const invoke = async () => {
    setBusy('invoke');
    setError(undefined);
    let invocationId: string | undefined;
    try {
      const created = unwrap(
        await workflow.raw.POST('/api/v1/projects/{projectId}/workflow/invocations', {
          params: { path: { projectId }, header: { 'Idempotency-Key': crypto.randomUUID() } },
          body: request(),
        }),
      );
      invocationId = created.invocation_id;
      unwrap(
        await workflow.raw.POST('/api/v1/projects/{projectId}/workflow/invocations/{invocationId}/launch', {
          params: { path: { projectId, invocationId } },
        }),
      );
      navigate(`${base}/invocations/${invocationId}`);
    } catch (failure) {
      // A refused launch leaves the invocation; its page shows why.
      if (invocationId) navigate(`${base}/invocations/${invocationId}`);
      else setError(failure);
    } finally {
      setBusy(undefined);
    }
  };

  return (
    <ProjectFrame title="Try an intent">
      <form
        className="intent-form"
        onSubmit={(e) => {
          e.preventDefault();
          void tryIt();
        }}
      >
        <div className="field">
          <label htmlFor="intent">Intent</label>
          <textarea
            id="intent"
            rows={2}
            required
            maxLength={4000}
            value={intent}
            onChange={(e) => setIntent(e.currentTarget.value)}
            placeholder="e.g. the weekly status report for the platform team"
          />
        </div>
        <div className="field">
          <label htmlFor="intent-capabilities">Required capabilities (optional)</label>
          <input
            id="intent-capabilities"
            value={capabilities}
            onChange={(e) => setCapabilities(e.currentTarget.value)}
            aria-describedby="intent-capabilities-hint"
          />
          <p id="intent-capabilities-hint" className="hint">
            Comma-separated. Resolve and preflight create nothing.
          </p>
        </div>
        <div className="form-actions">
          <button
            type="submit"
            className="button-primary"
            disabled={busy !== undefined || intent.trim() === ''}
          >
            {busy === 'try' ? 'Checking…' : 'Resolve and preflight'}
          </button>
          {canEdit && result?.preflight.matched && (
            <button
              type="button"
              onClick={() => void invoke()}
              disabled={busy !== undefined || result.preflight.launch_outcome === 'refused'}
            >
              {busy === 'invoke' ? 'Invoking…' : 'Invoke and launch'}
            </button>
          )}
        </div>
      </form>
      <ProblemMessage error={error} />
      {result && (
        <div className="intent-result" aria-live="polite">
          <section aria-labelledby="resolve-title" className="panel">
            <h2 id="resolve-title">Resolve</h2>
            <Explanation result={result.resolve} />
          </section>
          <section aria-labelledby="preflight-title" className="panel">
            <h2 id="preflight-title">Preflight</h2>
            <p>
              <span className={`badge outcome-${result.preflight.launch_outcome}`}>
                {result.preflight.launch_outcome.replace(/_/g, ' ')}
              </span>{' '}
              {OUTCOME[result.preflight.launch_outcome]}
            </p>
            <dl className="facts">
              <dt>Route ready</dt>
              <dd>{result.preflight.route_ready ? 'yes' : 'no'}</dd>
              <dt>Template</dt>
              <dd>
                {result.preflight.template ? (
                  <>
                    <code>
                      {result.preflight.template.key}@{result.preflight.template.version}
                    </code>
                    {result.preflight.template.stages.length > 0 &&
                      ` · stages ${result.preflight.template.stages.map((s) => s.key).join(' → ')}`}
                  </>
                ) : (
                  '—'
                )}
              </dd>
            </dl>
            <h3>Blockers</h3>
            <Blockers blockers={result.preflight.blockers} />
          </section>
        </div>
      )}
    </ProjectFrame>
  );
}
