import type { ReactNode } from 'react';
import type { WorkflowApi } from '@svc/sdk';
import { RichText } from '../../../components/RichText';

type Blocker = WorkflowApi.components['schemas']['InvocationsBlocker'];

const CATEGORY: Record<Blocker['category'], string> = {
  classifier_template_configuration: 'Contract and template',
  roster_ownership: 'Stage owners',
  runtime_endpoints: 'Runtime',
  spawn_policy: 'Spawn policy',
  infrastructure_health: 'Infrastructure',
};

/**
 * What a person does about a blocker here, where the API's own advice speaks to API callers (headers and
 * request fields); other blockers keep the API's words.
 */
const ADVICE: Partial<Record<string, ReactNode>> = {
  no_contract_matched: (
    <>
      Create a contract whose intent phrases appear in this intent (Contracts, then New contract), or make one
      contract the fallback that takes any intent; then try the intent again. An invocation that matched
      nothing cannot launch: try the intent again once a contract matches.
    </>
  ),
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
          <p>
            <RichText text={b.message} />
          </p>
          <p className="recommended">
            <span className="label">Recommended action:</span>{' '}
            {ADVICE[b.code] ?? <RichText text={b.recommended_action} />}
          </p>
        </li>
      ))}
    </ul>
  );
}
