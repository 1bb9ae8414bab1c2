import { useState } from 'react';
import { Link } from 'react-router';
import { unwrap } from '../../../app/api';
import { useApi } from '../../../app/hooks';
import { useClients } from '../../../app/session';
import { ConfirmDialog } from '../../../components/ConfirmDialog';
import { Loading } from '../../../components/Loading';
import { ProblemMessage } from '../../../components/ProblemMessage';
import { ago } from '../../../components/time';
import { ProjectFrame, useCanEdit, useProjectBase, useProjectId } from '../project';
import type { Contract } from './contract-form';
import { CardTable } from '../../../components/CardTable';

/** The project's contracts (retired ones on request), with create, edit, retire and reactivate. */
export function ContractsPage() {
  const projectId = useProjectId();
  const base = useProjectBase();
  const canEdit = useCanEdit();
  const { workflow } = useClients();
  const [showRetired, setShowRetired] = useState(false);
  const [retiring, setRetiring] = useState<Contract | undefined>(undefined);
  const [actionError, setActionError] = useState<unknown>(undefined);
  const contracts = useApi(
    (signal) =>
      workflow.raw
        .GET('/api/v1/projects/{projectId}/workflow/contracts', {
          params: { path: { projectId }, query: { include_inactive: showRetired, limit: 500 } },
          signal,
        })
        .then(unwrap),
    [projectId, showRetired],
  );

  const setActive = async (contract: Contract, isActive: boolean) => {
    unwrap(
      await workflow.raw.PATCH('/api/v1/projects/{projectId}/workflow/contracts/{contractId}', {
        params: { path: { projectId, contractId: contract.contract_id } },
        body: { is_active: isActive },
      }),
    );
    contracts.reload();
  };

  return (
    <ProjectFrame title="Contracts">
      <div className="toolbar">
        {canEdit && (
          <Link className="button button-primary" to={`${base}/contracts/new`}>
            New contract
          </Link>
        )}
        <label className="inline">
          <input
            type="checkbox"
            checked={showRetired}
            onChange={(e) => setShowRetired(e.currentTarget.checked)}
          />{' '}
          Show retired contracts
        </label>
      </div>
      {contracts.loading && !contracts.data && <Loading what="Loading contracts" />}
      <ProblemMessage error={contracts.error} context="Contracts could not be loaded" />
      <ProblemMessage error={actionError} context="The contract could not be changed" />
      {contracts.data && contracts.data.length === 0 && (
        <p>No contracts yet. A contract routes matching intents to one versioned template.</p>
      )}
      {contracts.data && contracts.data.length > 0 && (
        <CardTable wide>
          <caption className="visually-hidden">Contracts of the project</caption>
          <thead>
            <tr>
              <th scope="col">Name</th>
              <th scope="col">Matches</th>
              <th scope="col">Template</th>
              <th scope="col">Priority</th>
              <th scope="col">State</th>
              <th scope="col">Changed</th>
              {canEdit && <th scope="col">Actions</th>}
            </tr>
          </thead>
          <tbody>
            {contracts.data.map((contract) => (
              <tr key={contract.contract_id}>
                <td>
                  <Link to={`${base}/contracts/${contract.contract_id}`}>{contract.name}</Link>
                  <div className="muted small">
                    <code>{contract.contract_id}</code> · revision {contract.revision}
                  </div>
                </td>
                <td>{describeClassifier(contract)}</td>
                <td>
                  <code>
                    {contract.template.key}@{contract.template.version}
                  </code>
                  <div className="muted small">
                    {contract.template.stages.length > 0
                      ? contract.template.stages.map((s) => s.key).join(' → ')
                      : 'one implicit stage'}{' '}
                    · artifact {contract.template.artifact_schema.name}@
                    {contract.template.artifact_schema.version}
                  </div>
                </td>
                <td>{contract.priority}</td>
                <td>
                  <span className={`badge ${contract.is_active ? 'badge-ok' : 'badge-muted'}`}>
                    {contract.is_active ? 'active' : 'retired'}
                  </span>
                </td>
                <td>{ago(contract.updated_at)}</td>
                {canEdit && (
                  <td>
                    {contract.is_active ? (
                      <button type="button" onClick={() => setRetiring(contract)}>
                        Retire<span className="visually-hidden"> {contract.name}</span>
                      </button>
                    ) : (
                      <button
                        type="button"
                        onClick={() => {
                          setActionError(undefined);
                          setActive(contract, true).catch(setActionError);
                        }}
                      >
                        Reactivate<span className="visually-hidden"> {contract.name}</span>
                      </button>
                    )}
                  </td>
                )}
              </tr>
            ))}
          </tbody>
        </CardTable>
      )}
      <ConfirmDialog
        open={retiring !== undefined}
        title="Retire contract"
        confirmLabel="Retire contract"
        danger
        onConfirm={() => setActive(retiring!, false)}
        onClose={() => setRetiring(undefined)}
      >
        <p>
          Retire <strong>{retiring?.name}</strong>? It leaves resolve at once: new intents no longer match it.
          Invocations already routed to it keep running, and it can be reactivated later.
        </p>
      </ConfirmDialog>
    </ProjectFrame>
  );
}

function describeClassifier(contract: Contract): string {
  if (contract.fallback) return 'anything (fallback)';
  const parts: string[] = [];
  const phrases = contract.classifier.intentContains;
  if (phrases.length > 0) parts.push(`intent contains ${phrases.map((p) => `“${p}”`).join(' or ')}`);
  const caps = contract.classifier.requiredCapabilities;
  if (caps.length > 0) parts.push(`capabilities ${caps.join(', ')}`);
  const metadata = Object.entries(contract.classifier.metadata);
  if (metadata.length > 0) parts.push(`metadata ${metadata.map(([k, v]) => `${k}=${v}`).join(', ')}`);
  return parts.join('; ') || '—';
}
