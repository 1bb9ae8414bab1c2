import type { HubApi } from '@svc/sdk';
import { ago, dateTime } from '../../components/time';
import { ScopeList } from './ScopeList';
import { CardTable } from '../../components/CardTable';

type ApiKey = HubApi.components['schemas']['ApiKey'];

function status(key: ApiKey, now = Date.now()): { label: string; className: string } {
  if (key.revoked_at) return { label: 'revoked', className: 'status status-off' };
  if (key.expires_at && new Date(key.expires_at).getTime() <= now)
    return { label: 'expired', className: 'status status-off' };
  return { label: 'active', className: 'status status-ok' };
}

/** "in 12 days", "in 5 h", or "—". */
function until(when: string | null, now = Date.now()): string {
  if (!when) return '';
  const ms = new Date(when).getTime() - now;
  if (!Number.isFinite(ms) || ms <= 0) return '';
  const hours = Math.floor(ms / 3_600_000);
  return hours < 48 ? `in ${Math.max(1, hours)} h` : `in ${Math.round(ms / 86_400_000)} days`;
}

/** The keys with access, expiry, last use and status; `onRevoke` (managers only) adds the revoke action. */
export function KeyTable({ keys, onRevoke }: { keys: ApiKey[]; onRevoke?: (key: ApiKey) => void }) {
  return (
    <CardTable wide className="key-table">
      <caption className="visually-hidden">API keys</caption>
      <thead>
        <tr>
          <th scope="col">Name</th>
          <th scope="col">Key</th>
          <th scope="col">Access</th>
          <th scope="col">Created</th>
          <th scope="col">Expires</th>
          <th scope="col">Last used</th>
          <th scope="col">Status</th>
          {onRevoke && (
            <th scope="col">
              <span className="visually-hidden">Actions</span>
            </th>
          )}
        </tr>
      </thead>
      <tbody>
        {keys.map((key) => {
          const state = status(key);
          return (
            <tr key={key.id} data-key-id={key.id}>
              <th scope="row">{key.name}</th>
              <td>
                <code>svc_{key.prefix}_…</code>
              </td>
              <td>
                <details>
                  <summary>
                    {key.preset ? `preset ${key.preset}` : 'explicit'} · {key.scopes.length} scopes
                  </summary>
                  <ScopeList scopes={key.scopes} />
                </details>
              </td>
              <td>{dateTime(key.created_at)}</td>
              <td data-column="expires">
                {key.expires_at ? (
                  <>
                    {dateTime(key.expires_at)} <span className="muted">{until(key.expires_at)}</span>
                  </>
                ) : (
                  'never'
                )}
              </td>
              <td data-column="last-used">
                {key.last_used_at ? (
                  <time dateTime={key.last_used_at} title={dateTime(key.last_used_at)}>
                    {ago(key.last_used_at)}
                  </time>
                ) : (
                  'never'
                )}
              </td>
              <td>
                <span className={state.className}>{state.label}</span>
              </td>
              {onRevoke && (
                <td>
                  {!key.revoked_at && (
                    <button
                      type="button"
                      className="button-danger-outline"
                      onClick={() => onRevoke(key)}
                      aria-label={`Revoke ${key.name}`}
                    >
                      Revoke
                    </button>
                  )}
                </td>
              )}
            </tr>
          );
        })}
      </tbody>
    </CardTable>
  );
}
