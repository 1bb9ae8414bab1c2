import type { RelayApi } from '@svc/contracts';
import { probe } from '../../data/local-service-probe';
import { readLivePid } from '../../data/runtime-files';
import { CliError } from '../../domain/cli-error';
import type { RelayAddress } from '../../domain/relay-address';
import { relayDaemonFiles } from './start-relay';

export interface RelayStatusReport {
  url: string;
  /** The relay daemon's pid file (from `relay start --daemon`) and whether its process lives. */
  daemon: { pid_file: string; pid: number | null };
  status: RelayApi.components['schemas']['RelayStatus'];
}

/** `svc internal relay status`: the relay's `/status` and the daemon pid file; exit 1 when it does not answer. */
export async function readRelayStatus(stateDir: string, address: RelayAddress): Promise<RelayStatusReport> {
  const files = relayDaemonFiles(stateDir);
  const pid = (await readLivePid(files.pid_file)) ?? null;
  const res = await probe(`${address.url}/status`);
  if (!res.ok || typeof res.body !== 'object' || res.body === null) {
    throw new CliError({
      code: 'relay_not_running',
      message: `the relay does not answer on ${address.url} (${res.detail ?? 'no status'})`,
      fix: 'svc internal relay start --daemon (or svc runtime up)',
      details: { url: address.url, pid },
    });
  }
  return {
    url: address.url,
    daemon: { pid_file: files.pid_file, pid },
    status: res.body as RelayStatusReport['status'],
  };
}
