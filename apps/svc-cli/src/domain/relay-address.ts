import { localUrl } from './runtime-plan';
import type { RuntimeSettings } from './runtime-plan';

export interface RelayAddress {
  host: string;
  port: number;
  /** Where a local client reaches it. */
  url: string;
}

/** The relay's address: the flags, else the pulled runtime config, else the relay's defaults (127.0.0.1:8787). */
export function relayAddress(
  flags: { host?: string | undefined; port?: number | undefined },
  runtime: RuntimeSettings | undefined,
): RelayAddress {
  const host = flags.host ?? runtime?.relay.bindHost ?? '127.0.0.1';
  const port = flags.port ?? runtime?.relay.listenPort ?? 8787;
  return { host, port, url: localUrl(host, port) };
}
