import { useState } from 'react';
import type { HubApi } from '@svc/sdk';
import { unwrap } from '../../app/api';
import { MANAGERS, roleAllows } from '../../app/roles';
import { useClients } from '../../app/session';
import { useWorkspace } from '../../app/workspace';
import { ConfirmDialog } from '../../components/ConfirmDialog';
import { ProblemMessage } from '../../components/ProblemMessage';

type NetworkHost = HubApi.components['schemas']['NetworkHost'];

/**
 * Drain (asks for confirmation, saying what happens to the host's agents) and Resume, for owners and admins
 * (the hub's roles for both). After either, the view is read again.
 */
export function HostDrainActions({ host, onChanged }: { host: NetworkHost; onChanged: () => void }) {
  const { role } = useWorkspace();
  const { hub } = useClients();
  const [confirming, setConfirming] = useState(false);
  const [resuming, setResuming] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  if (!roleAllows(role, MANAGERS)) return null;
  const params = { params: { path: { hostId: host.runtime_instance_id } } };
  const state = host.drain?.state ?? 'active';

  const resume = async () => {
    setResuming(true);
    setError(undefined);
    try {
      await hub.raw.POST('/api/v1/runtime-hosts/{hostId}/resume', params).then(unwrap);
      onChanged();
    } catch (failure) {
      setError(failure);
    } finally {
      setResuming(false);
    }
  };

  return (
    <div className="host-actions">
      {state === 'active' ? (
        <button type="button" onClick={() => setConfirming(true)}>
          Drain<span className="visually-hidden"> {host.name}</span>
        </button>
      ) : (
        <button type="button" onClick={() => void resume()} disabled={resuming}>
          {resuming ? 'Resuming…' : 'Resume'}
          <span className="visually-hidden"> {host.name}</span>
        </button>
      )}
      <ProblemMessage error={error} context={`${host.name} was not resumed`} />
      <ConfirmDialog
        open={confirming}
        title={`Drain ${host.name}?`}
        confirmLabel="Drain host"
        onClose={() => setConfirming(false)}
        onConfirm={async () => {
          await hub.raw.POST('/api/v1/runtime-hosts/{hostId}/drain', params).then(unwrap);
          onChanged();
        }}
      >
        <p>
          The host takes no new spawns or workflow stages from now on; new work goes to other hosts. Its
          agents finish the stages they hold, then stop.
        </p>
        <p>
          When it shows <strong>drained</strong>, the runtime can be stopped or upgraded. A fresh{' '}
          <code>svc runtime up</code> (or Resume) makes it take work again.
        </p>
      </ConfirmDialog>
    </div>
  );
}
