import { createHash } from 'node:crypto';
import { credentialFingerprint, repoCredentialProblem } from './repo-credential-format';

describe('repoCredentialProblem for PATs', () => {
  test.each([
    ['20 printable characters', 'a'.repeat(20)],
    ['255 printable characters', 'b'.repeat(255)],
    ['a GitHub classic token', `ghp_${'A1'.repeat(18)}`],
    ['punctuation', `glpat-${'x'.repeat(14)}!#$%&*+`],
  ])('when the PAT is %s, then it is accepted', (_name, secret) => {
    expect(repoCredentialProblem('pat', secret)).toBeNull();
  });

  test.each([
    ['19 characters', 'a'.repeat(19)],
    ['256 characters', 'b'.repeat(256)],
    ['a space', `${'c'.repeat(10)} ${'c'.repeat(10)}`],
    ['a newline', `${'d'.repeat(20)}\n`],
    ['non-ASCII', `${'e'.repeat(20)}é`],
  ])('when the PAT has %s, then it is refused without quoting it', (_name, secret) => {
    const problem = repoCredentialProblem('pat', secret);
    expect(problem).toMatch(/20 to 255 printable/);
    expect(problem).not.toContain(secret.trim());
  });
});

describe('repoCredentialProblem for deploy keys', () => {
  test.each([
    ['a PAT', `ghp_${'A1'.repeat(18)}`],
    ['a PKCS#8 block', '-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----'],
    ['a public key', 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIIn1nXc4KRd0HVddYj8e07c7rLYfsm deploy'],
    ['mismatched markers', '-----BEGIN RSA PRIVATE KEY-----\nAAAA\n-----END EC PRIVATE KEY-----'],
    [
      'OpenSSH armor around other data',
      '-----BEGIN OPENSSH PRIVATE KEY-----\naGVsbG8gd29ybGQ=\n-----END OPENSSH PRIVATE KEY-----',
    ],
    [
      'OpenSSH armor around non-base64',
      '-----BEGIN OPENSSH PRIVATE KEY-----\n!!!\n-----END OPENSSH PRIVATE KEY-----',
    ],
    [
      'an RSA block that does not parse',
      '-----BEGIN RSA PRIVATE KEY-----\nAAAA\n-----END RSA PRIVATE KEY-----',
    ],
    [
      'a passphrase-protected RSA PEM',
      '-----BEGIN RSA PRIVATE KEY-----\nProc-Type: 4,ENCRYPTED\nDEK-Info: AES-256-CBC,00\n\nAAAA\n-----END RSA PRIVATE KEY-----',
    ],
  ])('when the deploy key is %s, then it is refused', (_name, secret) => {
    expect(repoCredentialProblem('deploy_key', secret)).not.toBeNull();
  });
});

describe('credentialFingerprint', () => {
  test('when a secret is fingerprinted, then it is the first 12 hex digits of its SHA-256', () => {
    const secret = `ghp_${'z'.repeat(36)}`;
    expect(credentialFingerprint(secret)).toBe(
      createHash('sha256').update(secret).digest('hex').slice(0, 12),
    );
    expect(credentialFingerprint(secret)).toMatch(/^[0-9a-f]{12}$/);
  });
});
