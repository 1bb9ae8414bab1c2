import type { HubApi } from '@svc/sdk';
import { ago, dateTime } from '../../components/time';
import { HostDrainActions } from './HostDrainActions';

type NetworkHost = HubApi.components['schemas']['NetworkHost'];

type CheckState = 'ready' | 'not_ready' | 'unknown';

const MARK: Record<CheckState, { mark: string; words: string; className: string }> = {
  ready: { mark: '✓', words: ': yes', className: 'check check-ok' },
  not_ready: { mark: '✗', words: ': no', className: 'check check-bad' },
  unknown: { mark: '?', words: ': unknown', className: 'check check-unknown' },
};

/**
 * A readiness check in words and a mark, so it does not rely on colour. `unknown` (the heartbeat that said
 * it is stale) is never shown as ready.
 */
function Check({ state, label }: { state: CheckState; label: string }) {
  const { mark, words, className } = MARK[state];
  return (
    <li className={className} data-state={state}>
      <span aria-hidden="true">{mark}</span> {label}
      {state === 'unknown' ? <span className="muted"> unknown (no fresh heartbeat)</span> : null}
      <span className="visually-hidden">{words}</span>
    </li>
  );
}

function keyWords(key: NetworkHost['readiness']['runtime_key']): string {
  switch (key.state) {
    case 'current':
      return 'current';
    case 'superseded':
      return `superseded at ${key.rotated_at ?? '?'}${key.rotated_by ? ` by ${key.rotated_by}` : ''}, valid until ${key.valid_until ?? '?'}`;
    case 'revoked':
      return `revoked at ${key.valid_until ?? '?'}`;
    case 'other':
      return 'a workspace key that is not the host’s runtime key';
    default:
      return 'unknown (no heartbeat recorded its key)';
  }
}

function UrlValue({ url }: { url: string | null }) {
  if (!url) return <span className="muted">none</span>;
  return <code className="url">{url}</code>;
}

/** One runtime host of the Networks view: readiness and its reasons, heartbeat age, agents, URLs, tunnel. */
const DRAIN_WORDS = { active: 'Active', draining: 'Draining', drained: 'Drained' } as const;

export function HostCard({
  host,
  now,
  onChanged,
}: {
  host: NetworkHost;
  now: number;
  onChanged: () => void;
}) {
  const { readiness, tunnel } = host;
  const drain = host.drain && host.drain.state !== 'active' ? host.drain : null;
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
        {drain && (
          <span className="badge badge-drain" data-testid="drain-state" data-state={drain.state}>
            {DRAIN_WORDS[drain.state]}
          </span>
        )}
        <HostDrainActions host={host} onChanged={onChanged} />
      </header>
      <p className="muted">
        <code>{host.runtime_instance_id}</code>
        {host.runtime_version ? ` · runtime ${host.runtime_version}` : ''}
      </p>
      {readiness.causes.length > 0 && (
        <div className="reasons" role="note" data-testid="host-causes">
          <p>Why it is not fully ready:</p>
          <ul>
            {readiness.causes.map((cause) => (
              <li key={cause.code} data-cause={cause.code}>
                {cause.message}
              </li>
            ))}
          </ul>
        </div>
      )}
      <div className="host-grid">
        <section aria-label="Readiness">
          <ul className="checks">
            <Check
              state={readiness.heartbeat_fresh ? 'ready' : 'not_ready'}
              label="Heartbeat fresh (≤ 45 s)"
            />
            <Check state={readiness.relay_state} label="Relay ready" />
            <Check state={readiness.console_router_state} label="Console router ready" />
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
          <dd data-testid="running-agents">
            {host.running_agents}
            {!readiness.heartbeat_fresh && host.running_agents > 0 ? (
              <span className="not-ready small"> (their host is stale)</span>
            ) : null}
          </dd>
          {drain && (
            <>
              <dt>Drain</dt>
              <dd data-testid="drain-facts">
                {drain.state === 'drained' ? 'drained' : 'draining'}: asked{' '}
                {drain.requested_at ? ago(drain.requested_at, now) : ''}
                {drain.requested_by ? ` by ${drain.requested_by}` : ''}
                {drain.drained_at ? `, finished ${ago(drain.drained_at, now)}` : ''}
              </dd>
            </>
          )}
          <dt>Runtime key</dt>
          <dd data-testid="runtime-key">{keyWords(readiness.runtime_key)}</dd>
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
