import { useState } from 'react';
import type { HubApi } from '@svc/sdk';
import { unwrap } from '../../app/api';
import { usePolling } from '../../app/hooks';
import { MANAGERS, roleAllows } from '../../app/roles';
import { useClients } from '../../app/session';
import { useWorkspace } from '../../app/workspace';
import { ConfirmDialog } from '../../components/ConfirmDialog';
import { Loading } from '../../components/Loading';
import { ProblemMessage } from '../../components/ProblemMessage';
import { CreateKeyForm } from './CreateKeyForm';
import type { CreatedApiKey } from './CreateKeyForm';
import { KeyTable } from './KeyTable';
import { NewKeyPanel } from './NewKeyPanel';
import './api-keys.css';

type ApiKey = HubApi.components['schemas']['ApiKey'];

/**
 * Settings → API keys: the workspace's keys with their access, expiry and last use (refreshed every 15 s), a
 * form to create one from a preset or explicit scopes, the new key shown once, and revoke with confirmation.
 */
export function ApiKeysPage() {
  const { workspace, role } = useWorkspace();
  const { hub } = useClients();
  const [includeRevoked, setIncludeRevoked] = useState(false);
  const [creating, setCreating] = useState(false);
  const [created, setCreated] = useState<CreatedApiKey | undefined>(undefined);
  const [revoking, setRevoking] = useState<ApiKey | undefined>(undefined);
  const manage = roleAllows(role, MANAGERS);
  const keys = usePolling(
    (signal) =>
      hub.raw
        .GET('/api/v1/workspaces/{workspace}/api-keys', {
          params: { path: { workspace: workspace.id }, query: { include_revoked: includeRevoked } },
          signal,
        })
        .then(unwrap),
    15_000,
    [workspace.id, includeRevoked],
  );

  const revoke = async (key: ApiKey) => {
    await hub.raw
      .DELETE('/api/v1/workspaces/{workspace}/api-keys/{keyId}', {
        params: { path: { workspace: workspace.id, keyId: key.id } },
      })
      .then(unwrap);
    if (created?.id === key.id) setCreated(undefined);
    keys.reload();
  };

  return (
    <section aria-labelledby="page-title" className="page-api-keys">
      <div className="page-head">
        <h1 id="page-title">API keys</h1>
        {manage && !creating && (
          <button type="button" className="button-primary" onClick={() => setCreating(true)}>
            New API key
          </button>
        )}
      </div>
      <p className="muted">
        Keys let automation, CI and runtime hosts call the hub and the Workflow API as this workspace. A key’s
        secret is shown once, when it is created.
      </p>

      {created && <NewKeyPanel created={created} onDone={() => setCreated(undefined)} />}
      {manage && creating && (
        <CreateKeyForm
          onCancel={() => setCreating(false)}
          onCreated={(key) => {
            setCreated(key);
            setCreating(false);
            keys.reload();
          }}
        />
      )}

      <div className="list-head">
        <h2>Keys</h2>
        <label className="choice">
          <input
            type="checkbox"
            checked={includeRevoked}
            onChange={(e) => setIncludeRevoked(e.target.checked)}
          />
          Show revoked keys
        </label>
      </div>
      <ProblemMessage error={keys.error} context="The keys could not be loaded" />
      {keys.loading && !keys.data && <Loading what="Loading keys" />}
      {keys.data && keys.data.length === 0 && <p>No keys yet.</p>}
      {keys.data && keys.data.length > 0 && (
        <KeyTable keys={keys.data} onRevoke={manage ? setRevoking : undefined} />
      )}

      <ConfirmDialog
        open={revoking !== undefined}
        title="Revoke this key?"
        confirmLabel="Revoke key"
        danger
        onClose={() => setRevoking(undefined)}
        onConfirm={() => (revoking ? revoke(revoking) : Promise.resolve())}
      >
        <p>
          <strong>{revoking?.name}</strong> (<code>svc_{revoking?.prefix}_…</code>) stops working at once at
          the hub and within seconds at the other services (30 s at most). Whatever uses it is refused from
          then on. This cannot be undone.
        </p>
      </ConfirmDialog>
    </section>
  );
}
