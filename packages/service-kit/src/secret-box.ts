import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

export interface SecretBoxKey {
  id: string;
  /** 32 bytes. */
  key: Buffer;
}

export interface SecretBox {
  /** `v1.<keyId>.<iv>.<ciphertext>.<tag>` (base64url parts), sealed with the active key. */
  seal(plaintext: string, associatedData?: string): string;
  open(sealed: string, associatedData?: string): string;
  /** Id of the key new secrets are sealed with. */
  activeKeyId: string;
}

/**
 * Parses `id:base64key[,id:base64key…]`; the first key seals, every key opens (rotation: put the new key
 * first, keep the old one until everything is resealed).
 */
export function parseSecretBoxKeys(spec: string): SecretBoxKey[] {
  const keys = spec
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)
    .map((part) => {
      const [id, encoded] = part.split(':');
      if (!id || !encoded || !/^[A-Za-z0-9_-]{1,32}$/.test(id))
        throw new Error('each key must be written id:base64');
      const key = Buffer.from(encoded, 'base64');
      if (key.length !== 32) throw new Error(`key ${id} must decode to 32 bytes`);
      return { id, key };
    });
  if (keys.length === 0) throw new Error('at least one key is required');
  return keys;
}

/** AES-256-GCM with a random 96-bit IV per secret; the key id is stored so keys can rotate. */
export function createSecretBox(keys: SecretBoxKey[]): SecretBox {
  const active = keys[0];
  if (!active) throw new Error('createSecretBox needs at least one key');
  const byId = new Map(keys.map((k) => [k.id, k.key]));
  return {
    activeKeyId: active.id,
    seal(plaintext, associatedData) {
      const iv = randomBytes(12);
      const cipher = createCipheriv('aes-256-gcm', active.key, iv);
      if (associatedData) cipher.setAAD(Buffer.from(associatedData, 'utf8'));
      const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
      const tag = cipher.getAuthTag();
      return [
        'v1',
        active.id,
        iv.toString('base64url'),
        ciphertext.toString('base64url'),
        tag.toString('base64url'),
      ].join('.');
    },
    open(sealed, associatedData) {
      const [version, keyId, iv, ciphertext, tag] = sealed.split('.');
      if (version !== 'v1' || !keyId || !iv || ciphertext === undefined || !tag)
        throw new Error('sealed secret is malformed');
      const key = byId.get(keyId);
      if (!key) throw new Error(`sealed with unknown key ${keyId}`);
      const decipher = createDecipheriv('aes-256-gcm', key, Buffer.from(iv, 'base64url'));
      if (associatedData) decipher.setAAD(Buffer.from(associatedData, 'utf8'));
      decipher.setAuthTag(Buffer.from(tag, 'base64url'));
      try {
        return Buffer.concat([
          decipher.update(Buffer.from(ciphertext, 'base64url')),
          decipher.final(),
        ]).toString('utf8');
      } catch {
        // GCM's own message ("Unsupported state or unable to authenticate data") names neither cause.
        throw new Error(
          `sealed secret does not open with key ${keyId}: that key id holds other key material than the one ` +
            'that sealed it, or the value was altered',
        );
      }
    },
  };
}
