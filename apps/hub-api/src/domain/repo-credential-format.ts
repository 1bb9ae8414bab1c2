import { createHash, createPrivateKey } from 'node:crypto';

export type RepoCredentialKind = 'pat' | 'deploy_key';

/** First 12 hex digits of the secret's SHA-256: enough to tell credentials apart, useless to attackers. */
export function credentialFingerprint(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex').slice(0, 12);
}

/** 20–255 printable ASCII characters, no spaces (GitHub, GitLab and Bitbucket tokens all fit). */
const PAT = /^[\x21-\x7e]{20,255}$/;

const PEM =
  /^-----BEGIN (OPENSSH|RSA|EC) PRIVATE KEY-----\r?\n([\s\S]*?)\r?\n?-----END \1 PRIVATE KEY-----\s*$/;
const OPENSSH_MAGIC = Buffer.from('openssh-key-v1\0', 'latin1');

/**
 * Whether a secret has the shape its kind needs; returns why not, or null. Reasons never quote the secret.
 * A deploy key must be an unencrypted private key — OpenSSH (`openssh-key-v1`, cipher `none`) or an RSA/EC
 * PEM that parses — because the runtime uses it without anyone to type a passphrase.
 */
export function repoCredentialProblem(kind: RepoCredentialKind, secret: string): string | null {
  if (kind === 'pat') {
    return PAT.test(secret) ? null : 'a PAT must be 20 to 255 printable characters without spaces';
  }
  const pem = PEM.exec(secret.trim());
  if (!pem) {
    return 'a deploy key must be an OpenSSH (-----BEGIN OPENSSH PRIVATE KEY-----) or RSA/EC PEM private key';
  }
  const [, type, body] = pem as unknown as [string, 'OPENSSH' | 'RSA' | 'EC', string];
  if (type === 'OPENSSH') return openSshProblem(body);
  if (/^Proc-Type:\s*4,\s*ENCRYPTED/im.test(body))
    return 'a deploy key must not be protected by a passphrase';
  try {
    const key = createPrivateKey({ key: secret.trim(), format: 'pem' });
    const expected = type === 'RSA' ? 'rsa' : 'ec';
    return key.asymmetricKeyType === expected ? null : `the key is not an ${type} private key`;
  } catch {
    return `the ${type} private key could not be read`;
  }
}

function openSshProblem(body: string): string | null {
  const base64 = body.replace(/\s+/g, '');
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(base64)) return 'the OpenSSH private key is not valid base64';
  const blob = Buffer.from(base64, 'base64');
  if (
    blob.length < OPENSSH_MAGIC.length + 4 ||
    !blob.subarray(0, OPENSSH_MAGIC.length).equals(OPENSSH_MAGIC)
  ) {
    return 'the OpenSSH private key does not start with openssh-key-v1';
  }
  const cipherLength = blob.readUInt32BE(OPENSSH_MAGIC.length);
  const cipherStart = OPENSSH_MAGIC.length + 4;
  if (cipherLength > 64 || blob.length < cipherStart + cipherLength)
    return 'the OpenSSH private key is truncated';
  const cipher = blob.subarray(cipherStart, cipherStart + cipherLength).toString('latin1');
  return cipher === 'none' ? null : 'a deploy key must not be protected by a passphrase';
}
