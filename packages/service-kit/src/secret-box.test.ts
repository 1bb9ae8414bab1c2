import { randomBytes } from 'node:crypto';
import { createSecretBox, parseSecretBoxKeys } from './secret-box';
import { newId } from './ids';

const k = (id: string) => `${id}:${randomBytes(32).toString('base64')}`;

describe('secret box', () => {
  test('when a secret is sealed, then it opens to the same text and the text is not visible', () => {
    const box = createSecretBox(parseSecretBoxKeys(k('k1')));
    const sealed = box.seal('ghp_supersecret', 'repo_1');
    expect(sealed).not.toContain('supersecret');
    expect(sealed.startsWith('v1.k1.')).toBe(true);
    expect(box.open(sealed, 'repo_1')).toBe('ghp_supersecret');
  });

  test('when the ciphertext or the associated data is changed, then opening fails', () => {
    const box = createSecretBox(parseSecretBoxKeys(k('k1')));
    const sealed = box.seal('secret', 'a');
    expect(() => box.open(sealed, 'b')).toThrow();
    const parts = sealed.split('.');
    parts[3] = Buffer.from('tampered').toString('base64url');
    expect(() => box.open(parts.join('.'), 'a')).toThrow();
  });

  test('when the same key id holds other key material, then opening says so instead of a cipher error', () => {
    const sealed = createSecretBox(parseSecretBoxKeys(k('dev1'))).seal('secret', 'a');
    expect(() => createSecretBox(parseSecretBoxKeys(k('dev1'))).open(sealed, 'a')).toThrow(
      'sealed secret does not open with key dev1: that key id holds other key material than the one that sealed it, or the value was altered',
    );
  });

  test('when keys rotate, then old secrets still open and new ones use the new key', () => {
    const old = k('k1');
    const sealedBefore = createSecretBox(parseSecretBoxKeys(old)).seal('x');
    const rotated = createSecretBox(parseSecretBoxKeys(`${k('k2')},${old}`));
    expect(rotated.open(sealedBefore)).toBe('x');
    expect(rotated.seal('y').startsWith('v1.k2.')).toBe(true);
  });

  test('when a key spec is malformed, then parsing says why', () => {
    expect(() => parseSecretBoxKeys('k1:' + Buffer.alloc(16).toString('base64'))).toThrow(/32 bytes/);
    expect(() => parseSecretBoxKeys('nokey')).toThrow(/id:base64/);
    expect(() => parseSecretBoxKeys('')).toThrow(/at least one/);
  });
});

describe('ids', () => {
  test('when ids are made over time, then they sort by creation time and carry their prefix', () => {
    const a = newId('ws', 1_000);
    const b = newId('ws', 2_000);
    expect(a).toMatch(/^ws_[0-9a-z]{26}$/);
    expect([b, a].sort()).toEqual([a, b]);
  });
});
