/** A strong entity tag for a version string: the version, quoted. */
export function quotedEtag(version: string): string {
  return `"${version}"`;
}

/**
 * Whether an `If-None-Match` header names this version: `*`, or one of its comma-separated tags, compared
 * without a weak prefix (`W/`) and without quotes (a client that sends the bare `version` is understood too).
 */
export function ifNoneMatchHits(header: string | string[] | undefined, version: string): boolean {
  if (header === undefined) return false;
  const tags = (Array.isArray(header) ? header.join(',') : header).split(',');
  return tags.some((raw) => {
    const tag = raw.trim().replace(/^W\//, '');
    return tag === '*' || tag === version || tag === quotedEtag(version);
  });
}
