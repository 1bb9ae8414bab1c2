import type { WorkflowApi } from '@svc/sdk';
import { CardTable } from '../../../components/CardTable';

type ResolveResult = WorkflowApi.components['schemas']['ContractsResolveResult'];

const RULES: Record<string, string> = {
  only_candidate: 'it was the only matching contract',
  priority: 'it has the highest priority',
  criteria_matched: 'it matched the most criteria',
  non_fallback: 'a specific contract wins over the fallback',
  oldest_contract: 'it is the oldest of the tied contracts',
};

/** Resolve's answer in words: the winner and why, every contract considered with each criterion, assistance. */
export function Explanation({ result }: { result: ResolveResult }) {
  const x = result.explanation;
  return (
    <div className="explanation">
      <p className="verdict">
        {result.matched && result.contract ? (
          <>
            Matched <strong>{result.contract.name}</strong>
            {result.template && (
              <>
                {' '}
                → template{' '}
                <code>
                  {result.template.key}@{result.template.version}
                </code>
              </>
            )}
            {x.winner_rule && <> — {RULES[x.winner_rule] ?? x.winner_rule}</>}.
          </>
        ) : (
          <>No contract matched this intent.</>
        )}
      </p>
      {x.winner_reason && <p className="muted">{x.winner_reason}</p>}
      <p className="muted small">
        Normalized intent: <code>{x.normalized_intent}</code> · {x.active_contracts} active contract
        {x.active_contracts === 1 ? '' : 's'}, {x.candidates.length} considered, {x.unlisted_contracts} could
        not match.
      </p>
      {x.candidates.length > 0 && (
        <CardTable className="candidates">
          <caption className="visually-hidden">Contracts considered</caption>
          <thead>
            <tr>
              <th scope="col">Contract</th>
              <th scope="col">Priority</th>
              <th scope="col">Criteria</th>
              <th scope="col">Result</th>
            </tr>
          </thead>
          <tbody>
            {x.candidates.map((c) => (
              <tr key={c.contract_id}>
                <td>
                  {c.name}
                  {c.is_fallback && <span className="muted"> (fallback)</span>}
                </td>
                <td>{c.priority}</td>
                <td>
                  <ul className="criteria">
                    {c.criteria.map((criterion, index) => (
                      <li key={index} className={criterion.passed ? 'passed' : 'failed'}>
                        <span aria-hidden="true">{criterion.passed ? '✓' : '✗'}</span>
                        <span className="visually-hidden">{criterion.passed ? 'passed' : 'failed'}</span>{' '}
                        {criterion.kind.replace(/_/g, ' ')} <code>{criterion.value}</code> —{' '}
                        {criterion.reason}
                      </li>
                    ))}
                  </ul>
                </td>
                <td>{c.matched ? `matched (${c.criteria_matched} criteria)` : 'no match'}</td>
              </tr>
            ))}
          </tbody>
        </CardTable>
      )}
      {x.assistance && (
        <div className="assistance">
          <h3>Model assistance</h3>
          <p>
            The project asked its model ({x.assistance.provider} <code>{x.assistance.model}</code>) because{' '}
            {x.assistance.trigger === 'tie' ? 'contracts were tied' : 'no contract matched'}: outcome{' '}
            <strong>{x.assistance.outcome.replace(/_/g, ' ')}</strong>. {x.assistance.detail}
          </p>
          {x.assistance.suggestion && (
            <p>
              Suggested <strong>{x.assistance.suggestion.name}</strong> ({x.assistance.suggestion.contract_id}
              ): {x.assistance.suggestion.reason}
            </p>
          )}
          <p className="muted small">
            {x.assistance.contracts_offered} contracts offered
            {x.assistance.latency_ms !== null && ` · ${x.assistance.latency_ms} ms`} · tokens{' '}
            {x.assistance.tokens_in} in, {x.assistance.tokens_out} out
            {x.assistance.budget_warning && ' · the budget is nearly spent'}
          </p>
        </div>
      )}
    </div>
  );
}
