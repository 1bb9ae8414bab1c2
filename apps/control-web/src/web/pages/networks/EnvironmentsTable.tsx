import type { HubApi } from '@svc/sdk';

type RuntimeEnvironment = HubApi.components['schemas']['RuntimeEnvironment'];

function errorCode(error: Record<string, unknown> | null): string | undefined {
  const code = error?.['code'];
  return typeof code === 'string' ? code : undefined;
}

/** The workspace's runtime environments with their hosts and stored tunnel state. */
export function EnvironmentsTable({ environments }: { environments: RuntimeEnvironment[] }) {
  if (environments.length === 0) return <p className="muted">No runtime environments.</p>;
  return (
    <table>
      <caption className="visually-hidden">Runtime environments</caption>
      <thead>
        <tr>
          <th scope="col">Environment</th>
          <th scope="col">Hosts</th>
          <th scope="col">Tunnel</th>
          <th scope="col">Console hostname</th>
          <th scope="col">Relay hostname</th>
        </tr>
      </thead>
      <tbody>
        {environments.map((env) => {
          const failure = errorCode(env.tunnel.last_error);
          return (
            <tr key={env.id}>
              <th scope="row">{env.name}</th>
              <td>{env.hosts.map((h) => h.name).join(', ') || '—'}</td>
              <td>
                <span className={`tunnel-state tunnel-${env.tunnel.state}`}>{env.tunnel.state}</span>{' '}
                {env.tunnel.provider ?? ''}
                {failure && (
                  <>
                    {' '}
                    · last error <code>{failure}</code>
                  </>
                )}
              </td>
              <td>{env.tunnel.console_hostname ? <code>{env.tunnel.console_hostname}</code> : '—'}</td>
              <td>{env.tunnel.relay_hostname ? <code>{env.tunnel.relay_hostname}</code> : '—'}</td>
            </tr>
          );
        })}
      </tbody>
    </table>
  );
}
