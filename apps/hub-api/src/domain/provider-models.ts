/** How many suggestions an unsupported identifier gets at most. */
export const MAX_CLOSE_MATCHES = 3;

/** Optimal string alignment distance (Levenshtein plus adjacent transpositions). */
function editDistance(a: string, b: string): number {
  const rows = a.length + 1;
  const cols = b.length + 1;
  const d: number[][] = Array.from({ length: rows }, (_, i) =>
    Array.from({ length: cols }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i < rows; i += 1) {
    for (let j = 1; j < cols; j += 1) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      const row = d[i] as number[];
      const prev = d[i - 1] as number[];
      let best = Math.min(
        (prev[j] as number) + 1,
        (row[j - 1] as number) + 1,
        (prev[j - 1] as number) + cost,
      );
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        best = Math.min(best, ((d[i - 2] as number[])[j - 2] as number) + 1);
      }
      row[j] = best;
    }
  }
  return (d[rows - 1] as number[])[cols - 1] as number;
}

/**
 * Catalog identifiers close to an unsupported one, best first, at most `limit`: a different case, a missing
 * or wrong provider prefix, a typo, or a fragment of the model name (`sonnet`). They are suggestions for a
 * human or an error message; callers must still send the exact identifier.
 */
export function closeMatches(id: string, catalog: readonly string[], limit = MAX_CLOSE_MATCHES): string[] {
  const wanted = id.trim().toLowerCase();
  if (wanted === '') return [];
  const wantedModel = wanted.includes('/') ? wanted.slice(wanted.indexOf('/') + 1) : wanted;
  const scored: { id: string; score: number }[] = [];
  for (const candidate of catalog) {
    const full = candidate.toLowerCase();
    const model = full.slice(full.indexOf('/') + 1);
    const distance = Math.min(editDistance(wanted, full), editDistance(wantedModel, model));
    const tolerance = Math.max(2, Math.floor(Math.max(wantedModel.length, model.length) / 4));
    let score: number | undefined;
    if (distance <= tolerance) score = distance;
    else if (wantedModel.length >= 3 && (model.includes(wantedModel) || wantedModel.includes(model))) {
      // A fragment (`sonnet`, `gpt-5`) ranks after every near-exact spelling.
      score = tolerance + 1 + Math.abs(model.length - wantedModel.length) / 100;
    }
    if (score !== undefined) scored.push({ id: candidate, score });
  }
  return scored
    .sort((x, y) => x.score - y.score || (x.id < y.id ? -1 : x.id > y.id ? 1 : 0))
    .slice(0, limit)
    .map((entry) => entry.id);
}
