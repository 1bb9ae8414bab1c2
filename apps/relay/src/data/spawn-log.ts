import { appendFileSync, chmodSync, existsSync, mkdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** One line of the relay's spawn log. Never carries a token, a key or an environment value. */
export interface SpawnLogEntry {
  at: string;
  spawn_id: string;
  event: 'requested' | 'started' | 'failed' | 'replayed' | 'refused';
  /** SHA-256 of the normalized request: a repeat is recognized without keeping more than this. */
  request_sha256?: string;
  agent_name?: string;
  command_key?: string;
  status?: number;
  code?: string;
  /** The final answer of a spawn (`started` / `failed`), replayed for repeats after a relay restart. */
  outcome?: unknown;
  detail?: string;
}

/**
 * The append-only JSON-lines log of spawn requests (owner-only, 0600). Each line is written synchronously, so
 * the record of a spawn is on disk before its answer leaves the relay.
 */
export class SpawnLog {
  constructor(private readonly file: string | undefined) {
    if (file) {
      mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
      if (!existsSync(file)) appendFileSync(file, '', { mode: 0o600 });
      chmodSync(file, 0o600);
    }
  }

  append(entry: Omit<SpawnLogEntry, 'at'>, now = new Date()): void {
    if (!this.file) return;
    appendFileSync(this.file, `${JSON.stringify({ at: now.toISOString(), ...entry })}\n`, { mode: 0o600 });
  }

  /** Every well-formed line, oldest first (a torn last line after a crash is skipped). */
  read(): SpawnLogEntry[] {
    if (!this.file || !existsSync(this.file)) return [];
    const entries: SpawnLogEntry[] = [];
    for (const line of readFileSync(this.file, 'utf8').split('\n')) {
      if (!line.trim()) continue;
      try {
        const parsed = JSON.parse(line) as SpawnLogEntry;
        if (typeof parsed.spawn_id === 'string' && typeof parsed.event === 'string') entries.push(parsed);
      } catch {
        // a torn line
      }
    }
    return entries;
  }
}
