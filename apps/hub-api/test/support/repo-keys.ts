import { generateKeyPairSync, randomBytes } from 'node:crypto';

/** Test material for repo credentials: real private keys in the formats deploy keys come in. */

function sshString(value: Buffer | string): Buffer {
  const bytes = typeof value === 'string' ? Buffer.from(value, 'latin1') : value;
  const length = Buffer.alloc(4);
  length.writeUInt32BE(bytes.length);
  return Buffer.concat([length, bytes]);
}

function uint32(value: number): Buffer {
  const out = Buffer.alloc(4);
  out.writeUInt32BE(value);
  return out;
}

function armor(label: string, blob: Buffer): string {
  const lines = blob.toString('base64').match(/.{1,70}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join('\n')}\n-----END ${label}-----\n`;
}

/**
 * An ed25519 key in the `openssh-key-v1` format ssh-keygen writes. With `cipher` other than `none` the
 * header announces a passphrase-protected key (the private section is not really encrypted: only the
 * header matters to the format check).
 */
export function openSshKey(cipher = 'none'): string {
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const pub = Buffer.from(publicKey.export({ format: 'jwk' }).x as string, 'base64url');
  const seed = Buffer.from(privateKey.export({ format: 'jwk' }).d as string, 'base64url');
  const publicBlob = Buffer.concat([sshString('ssh-ed25519'), sshString(pub)]);
  const check = randomBytes(4);
  let section = Buffer.concat([
    check,
    check,
    sshString('ssh-ed25519'),
    sshString(pub),
    sshString(Buffer.concat([seed, pub])),
    sshString('deploy@svc.test'),
  ]);
  const padding = Buffer.from(Array.from({ length: (8 - (section.length % 8)) % 8 }, (_, i) => i + 1));
  section = Buffer.concat([section, padding]);
  const encrypted = cipher !== 'none';
  const blob = Buffer.concat([
    Buffer.from('openssh-key-v1\0', 'latin1'),
    sshString(cipher),
    sshString(encrypted ? 'bcrypt' : 'none'),
    sshString(encrypted ? Buffer.concat([sshString(randomBytes(16)), uint32(16)]) : Buffer.alloc(0)),
    uint32(1),
    sshString(publicBlob),
    sshString(section),
  ]);
  return armor('OPENSSH PRIVATE KEY', blob);
}

export function rsaPemKey(passphrase?: string): string {
  return generateKeyPairSync('rsa', {
    modulusLength: 2048,
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: passphrase
      ? { type: 'pkcs1', format: 'pem', cipher: 'aes-256-cbc', passphrase }
      : { type: 'pkcs1', format: 'pem' },
  }).privateKey;
}

export function ecPemKey(): string {
  return generateKeyPairSync('ec', {
    namedCurve: 'P-256',
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'sec1', format: 'pem' },
  }).privateKey;
}

export function pkcs8Key(): string {
  return generateKeyPairSync('ed25519', {
    publicKeyEncoding: { type: 'spki', format: 'pem' },
    privateKeyEncoding: { type: 'pkcs8', format: 'pem' },
  }).privateKey;
}

/** A GitHub-shaped fine-grained PAT. */
export function githubPat(): string {
  return `github_pat_${randomBytes(40).toString('hex').slice(0, 82)}`;
}
