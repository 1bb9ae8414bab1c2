/**
 * Which repository URLs a repo may have: `https://host/path`, `ssh://[user@]host[:port]/path` or the scp-like
 * `user@host:path`. No `http`, no local paths, and never credentials in the URL — a token in a URL would
 * be shown to every reader of the repo, so secrets go through the credentials endpoint instead.
 * Returns why the URL is refused, or null when it is acceptable. The reason never repeats the URL.
 */
export function repoUrlProblem(url: string): string | null {
  if (/[\s\p{Cc}]/u.test(url)) return 'must not contain whitespace or control characters';
  const scpLike = /^(?:[A-Za-z0-9._-]+@)?([A-Za-z0-9.-]+):(?!\/)([A-Za-z0-9._~/-]+)$/.exec(url);
  if (scpLike) {
    const [, host, path] = scpLike as unknown as [string, string, string];
    if (!isHostname(host)) return 'names an invalid host';
    return meaningfulPath(path) ? null : 'needs a repository path';
  }
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return 'must be an https:// or SSH git URL';
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'ssh:') return 'must be an https:// or SSH git URL';
  if (!parsed.hostname) return 'needs a host';
  if (parsed.password) return 'must not carry a password or token; set the repo credential instead';
  if (parsed.protocol === 'https:' && parsed.username) {
    return 'must not carry a user name or token; set the repo credential instead';
  }
  if (parsed.search || parsed.hash) return 'must not have a query or fragment';
  return meaningfulPath(parsed.pathname) ? null : 'needs a repository path';
}

function isHostname(host: string): boolean {
  return (
    host.length <= 253 &&
    host.split('.').every((label) => /^[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?$/.test(label))
  );
}

function meaningfulPath(path: string): boolean {
  return path.split('/').some((segment) => segment !== '' && segment !== '.' && segment !== '..');
}
