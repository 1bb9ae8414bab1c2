import type { WorkflowApi } from '@svc/sdk';

type Blocker = WorkflowApi.components['schemas']['InvocationsBlocker'];

const CATEGORY: Record<Blocker['category'], string> = {
  classifier_template_configuration: 'Contract and template',
  roster_ownership: 'Stage owners',
  runtime_endpoints: 'Runtime',
  spawn_policy: 'Spawn policy',
  infrastructure_health: 'Infrastructure',
};

/** Typed blockers (preflight's, or what holds an invocation), each with what to do about it. */
export function Blockers({ blockers }: { blockers: readonly Blocker[] }) {
  if (blockers.length === 0) return <p className="ok-text">No blockers.</p>;
  return (
    <ul className="blockers">
      {blockers.map((b, index) => (
        <li key={index} className={`blocker blocker-${b.effect}`}>
          <p className="blocker-head">
            <span className="badge badge-warn">
              {b.effect === 'refuses_launch' ? 'refuses launch' : 'waits for owner'}
            </span>{' '}
            <strong>{CATEGORY[b.category]}</strong> · <code>{b.code}</code>
            {b.stage_key && (
              <>
                {' '}
                · stage <code>{b.stage_key}</code>
              </>
            )}
          </p>
          <p>{b.message}</p>
          <p className="recommended">
            <span className="label">Recommended action:</span> {b.recommended_action}
          </p>
        </li>
      ))}
    </ul>
  );
}
