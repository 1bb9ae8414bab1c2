import { existsSync } from 'node:fs';

/**
 * Whether the host is draining: its runtime (`svc runtime up`) writes the marker file while the hub says the
 * host drains and removes it when the drain ends. Read on every spawn, so the relay follows without a restart.
 * Without a configured file the relay never drains.
 */
export function drainMarker(file: string | undefined): () => boolean {
  if (!file) return () => false;
  return () => existsSync(file);
}
