/** "12 s ago", "5 min ago", "3 h ago", "2 d ago" for a past instant (ISO text or Date); "—" for none. */
export function ago(when: string | Date | null | undefined, now = Date.now()): string {
  if (!when) return '—';
  const ms = now - new Date(when).getTime();
  if (!Number.isFinite(ms)) return '—';
  const s = Math.max(0, Math.round(ms / 1000));
  if (s < 60) return `${s} s ago`;
  if (s < 3600) return `${Math.floor(s / 60)} min ago`;
  if (s < 86_400) return `${Math.floor(s / 3600)} h ago`;
  return `${Math.floor(s / 86_400)} d ago`;
}

/** A date and time in the reader's locale, or "—". */
export function dateTime(when: string | Date | null | undefined): string {
  if (!when) return '—';
  const date = new Date(when);
  return Number.isNaN(date.getTime()) ? '—' : date.toLocaleString();
}
