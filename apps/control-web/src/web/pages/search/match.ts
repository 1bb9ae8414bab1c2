/**
 * Whether a record matches a search: its id exactly (ids are copied whole), or any of its names containing
 * the words, ignoring case.
 */
export function matches(query: string, id: string, ...names: (string | null | undefined)[]): boolean {
  const q = query.trim().toLowerCase();
  if (!q) return false;
  if (id.toLowerCase() === q) return true;
  return names.some((name) => (name ?? '').toLowerCase().includes(q));
}
