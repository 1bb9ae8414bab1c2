import { useState } from 'react';
import { unwrap } from '../../app/api';
import { MANAGERS, roleAllows } from '../../app/roles';
import { useClients } from '../../app/session';
import { useWorkspace } from '../../app/workspace';
import { ConfirmDialog } from '../../components/ConfirmDialog';
import { ProblemMessage } from '../../components/ProblemMessage';
import type { Agent } from './data';

/**
 * Stop and Evict for owners and admins (the hub's `x-svc-participant-roles` of both); nothing for other
 * roles. Stop keeps the agent's id for a restart; evict is final and asks for confirmation first, saying what
 * is kept (the spec's "evict in control").
 */
export function AgentActions({ agent, onChanged }: { agent: Agent; onChanged: (agent: Agent) => void }) {
  const { role } = useWorkspace();
  const { hub } = useClients();
  const [confirming, setConfirming] = useState(false);
  const [stopping, setStopping] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  if (!roleAllows(role, MANAGERS) || agent.status === 'evicted') return null;
  const params = { params: { path: { agentId: agent.id } } };

  const stop = async () => {
    setStopping(true);
    setError(undefined);
    try {
      onChanged(await hub.raw.POST('/api/v1/agents/{agentId}/stop', params).then(unwrap));
    } catch (failure) {
      setError(failure);
    } finally {
      setStopping(false);
    }
  };

  return (
    <div className="agent-actions">
      {agent.status !== 'offline' && (
        <button type="button" onClick={() => void stop()} disabled={stopping}>
          {stopping ? 'Stopping…' : 'Stop'}
          <span className="visually-hidden"> {agent.name}</span>
        </button>
      )}
      <button type="button" className="button-danger" onClick={() => setConfirming(true)}>
        Evict<span className="visually-hidden"> {agent.name}</span>
      </button>
      <ProblemMessage error={error} context={`${agent.name} was not stopped`} />
      <ConfirmDialog
        open={confirming}
        title={`Evict ${agent.name}?`}
        confirmLabel="Evict agent"
        danger
        onClose={() => setConfirming(false)}
        onConfirm={async () => {
          onChanged(await hub.raw.POST('/api/v1/agents/{agentId}/evict', params).then(unwrap));
        }}
      >
        <p>
          Evicting ends the agent&apos;s hub identity for good: its token stops working at once, its console
          closes, and it cannot be started again.
        </p>
        <p>
          Nothing is deleted: files on the runtime host and workflow history stay, and the agent&apos;s record
          is kept while runs, handoffs, claims or evidence refer to it.
        </p>
      </ConfirmDialog>
    </div>
  );
}
