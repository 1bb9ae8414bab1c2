/** The encodings the build writes beside each compressible file: `<name>.br` and `<name>.gz`. */
export type StaticEncoding = 'br' | 'gzip';

/** The file suffix of each encoding. */
export const ENCODING_SUFFIX: Record<StaticEncoding, string> = { br: '.br', gzip: '.gz' };

/** Files worth compressing: text the browser loads (scripts, styles, the page, SVG, JSON, source maps). */
export const COMPRESSIBLE = /\.(js|mjs|css|html|svg|json|map|txt)$/;

/**
 * The encoding to answer with, given the request's `Accept-Encoding` and the encodings present on disk:
 * brotli before gzip when both are acceptable; `q=0` refuses an encoding (also through `*;q=0`); `*`
 * accepts any encoding not named. Undefined: send the file as it is (identity).
 */
export function chooseEncoding(
  acceptEncoding: string | undefined,
  available: ReadonlySet<StaticEncoding>,
): StaticEncoding | undefined {
  if (!acceptEncoding) return undefined;
  const weights = new Map<string, number>();
  for (const part of acceptEncoding.split(',')) {
    const [rawName, ...params] = part.trim().split(';');
    const name = rawName?.trim().toLowerCase();
    if (!name) continue;
    let q = 1;
    for (const param of params) {
      const [key, value] = param.split('=').map((s) => s.trim());
      if (key?.toLowerCase() === 'q') {
        const parsed = Number(value);
        q = Number.isFinite(parsed) ? Math.min(1, Math.max(0, parsed)) : 0;
      }
    }
    weights.set(name, Math.max(q, weights.get(name) ?? 0));
  }
  const weightOf = (name: string): number => {
    const own = weights.get(name);
    if (own !== undefined) return own;
    // `x-gzip` is gzip's old alias.
    if (name === 'gzip' && weights.has('x-gzip')) return weights.get('x-gzip')!;
    return weights.get('*') ?? 0;
  };
  let best: StaticEncoding | undefined;
  let bestWeight = 0;
  for (const encoding of ['br', 'gzip'] as const) {
    if (!available.has(encoding)) continue;
    const weight = weightOf(encoding);
    if (weight > bestWeight) {
      best = encoding;
      bestWeight = weight;
    }
  }
  return best;
}
