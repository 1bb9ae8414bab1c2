import type { HubApi } from '@svc/sdk';
import { ago, dateTime } from '../../components/time';

type NetworkHost = HubApi.components['schemas']['NetworkHost'];

/** A readiness check in words and a mark, so it does not rely on colour. */
function Check({ ok, label }: { ok: boolean; label: string }) {
  return (
    <li className={ok ? 'check check-ok' : 'check check-bad'}>
      <span aria-hidden="true">{ok ? '✓' : '✗'}</span> {label}
      <span className="visually-hidden">{ok ? ': yes' : ': no'}</span>
    </li>
  );
}

function UrlValue({ url }: { url: string | null }) {
  if (!url) return <span className="muted">none</span>;
  return <code className="url">{url}</code>;
}

/** One runtime host of the Networks view: readiness and its reasons, heartbeat age, agents, URLs, tunnel. */
export function HostCard({ host, now }: { host: NetworkHost; now: number }) {
  const { readiness, tunnel } = host;
  return (
    <article className="host" aria-labelledby={`host-${host.runtime_instance_id}`}>
      <header className="host-head">
        <h2 id={`host-${host.runtime_instance_id}`}>{host.name}</h2>
        <span
          className={host.spawn_ready ? 'badge badge-ok' : 'badge badge-bad'}
          data-testid="spawn-readiness"
        >
          {host.spawn_ready ? 'Spawn ready' : 'Not spawn ready'}
        </span>
      </header>
      <p className="muted">
        <code>{host.runtime_instance_id}</code>
        {host.runtime_version ? ` · runtime ${host.runtime_version}` : ''}
      </p>
      {readiness.reasons.length > 0 && (
        <div className="reasons" role="note">
          <p>Why it is not fully ready:</p>
          <ul>
            {readiness.reasons.map((reason) => (
              <li key={reason}>{reason}</li>
            ))}
          </ul>
        </div>
      )}
      <div className="host-grid">
        <section aria-label="Readiness">
          <ul className="checks">
            <Check ok={readiness.heartbeat_fresh} label="Heartbeat fresh (≤ 45 s)" />
            <Check ok={readiness.relay_ready} label="Relay ready" />
            <Check ok={readiness.console_router_ready} label="Console router ready" />
          </ul>
        </section>
        <dl className="facts">
          <dt>Last heartbeat</dt>
          <dd data-testid="heartbeat-age">
            {host.last_heartbeat_at ? (
              <time dateTime={host.last_heartbeat_at} title={dateTime(host.last_heartbeat_at)}>
                {ago(host.last_heartbeat_at, now)}
              </time>
            ) : (
              'never'
            )}
          </dd>
          <dt>Running agents</dt>
          <dd data-testid="running-agents">{host.running_agents}</dd>
          <dt>Console URL</dt>
          <dd data-testid="console-url">
            <UrlValue url={host.console_public_base_url} />
          </dd>
          <dt>Relay URL</dt>
          <dd data-testid="relay-url">
            <UrlValue url={host.relay_public_url} />
          </dd>
          <dt>Workdir root</dt>
          <dd>
            <code>{host.workdir_root}</code>
          </dd>
          <dt>Tunnel</dt>
          <dd data-testid="tunnel">
            {tunnel ? (
              <>
                <span className={`tunnel-state tunnel-${tunnel.state}`}>{tunnel.state}</span>{' '}
                {tunnel.provider ?? 'no provider'} · environment <code>{tunnel.runtime_environment}</code>
                {tunnel.connector_ready !== null && (
                  <> · connector {tunnel.connector_ready ? 'ready' : 'not ready'}</>
                )}
              </>
            ) : (
              <span className="muted">none (the host’s own URLs are used)</span>
            )}
          </dd>
        </dl>
      </div>
      {host.console_activity && host.console_activity.length > 0 && (
        <details className="activity">
          <summary>
            Console activity ({host.console_activity.length}{' '}
            {host.console_activity.length === 1 ? 'agent' : 'agents'})
          </summary>
          <ul>
            {host.console_activity.map((a) => (
              <li key={a.agent_id}>
                {a.agent_name}:{' '}
                {a.console_last_activity_at ? ago(a.console_last_activity_at, now) : 'no requests yet'}
              </li>
            ))}
          </ul>
        </details>
      )}
    </article>
  );
}
