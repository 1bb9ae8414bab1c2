import { createHash, randomBytes } from 'node:crypto';
import { safeEqual } from './constant-time';

/**
 * Workspace API keys: `svc_<prefix>_<secret>`.
 *
 * - prefix: 12 characters of `[a-z0-9]` (generated from the lowercase base32 alphabet); it is stored in
 *   clear, identifies the key row and is safe to show and log.
 * - secret: 32 random bytes, base64url without padding (43 characters). Only its SHA-256 is stored.
 *
 * base64url may contain `_`, so a key is split on its first two underscores only.
 * The secrets are high-entropy random values, so a fast hash is sufficient (no password hashing needed).
 */

export const API_KEY_TAG = 'svc';
export const API_KEY_PREFIX_LENGTH = 12;
export const API_KEY_SECRET_BYTES = 32;
/** base64url length of 32 bytes without padding. */
export const API_KEY_SECRET_LENGTH = 43;
/** `svc_` + prefix + `_` + secret. */
export const API_KEY_LENGTH = API_KEY_TAG.length + 1 + API_KEY_PREFIX_LENGTH + 1 + API_KEY_SECRET_LENGTH;

const BASE32_LOWER = 'abcdefghijklmnopqrstuvwxyz234567';
const PREFIX_PATTERN = /^[a-z0-9]{12}$/;
const SECRET_PATTERN = /^[A-Za-z0-9_-]{43}$/;
const OPAQUE_KIND_PATTERN = /^[a-z][a-z0-9]{0,15}$/;

export interface GeneratedApiKey {
  /** The full key. Shown to the user once, never stored. */
  key: string;
  prefix: string;
  /** SHA-256 hex of the secret part: the only secret-derived value to store. */
  secretHash: string;
  /** Last four characters of the key, for display next to the prefix. */
  last4: string;
}

export interface ParsedApiKey {
  prefix: string;
  secret: string;
}

function randomPrefix(): string {
  // 32 symbols and 256 possible byte values: taking the low five bits is unbiased.
  let prefix = '';
  for (const byte of randomBytes(API_KEY_PREFIX_LENGTH)) {
    prefix += BASE32_LOWER.charAt(byte & 31);
  }
  return prefix;
}

function randomSecret(): string {
  return randomBytes(API_KEY_SECRET_BYTES).toString('base64url');
}

function sha256Hex(value: string): string {
  return createHash('sha256').update(value, 'utf8').digest('hex');
}

export function generateApiKey(): GeneratedApiKey {
  const prefix = randomPrefix();
  const secret = randomSecret();
  const key = `${API_KEY_TAG}_${prefix}_${secret}`;
  return { key, prefix, secretHash: hashApiKeySecret(secret), last4: key.slice(-4) };
}

/**
 * Strictly parses an API key. Returns null (never throws) for anything that is not exactly
 * `svc_` + 12 × `[a-z0-9]` + `_` + a canonical 43-character base64url encoding of 32 bytes.
 */
export function parseApiKey(raw: string): ParsedApiKey | null {
  if (typeof raw !== 'string' || raw.length !== API_KEY_LENGTH) {
    return null;
  }
  const first = raw.indexOf('_');
  const second = first === -1 ? -1 : raw.indexOf('_', first + 1);
  if (second === -1) {
    return null;
  }
  const tag = raw.slice(0, first);
  const prefix = raw.slice(first + 1, second);
  const secret = raw.slice(second + 1);
  if (tag !== API_KEY_TAG || !PREFIX_PATTERN.test(prefix) || !SECRET_PATTERN.test(secret)) {
    return null;
  }
  // The last character of 43 base64url characters carries two padding bits; a non-canonical encoding
  // would decode to the same bytes, so only the canonical spelling is accepted.
  if (Buffer.from(secret, 'base64url').toString('base64url') !== secret) {
    return null;
  }
  return { prefix, secret };
}

/** SHA-256 hex of an API-key secret (the part after the prefix). */
export function hashApiKeySecret(secret: string): string {
  return sha256Hex(secret);
}

/** Constant-time check of a presented secret against the stored SHA-256 hex. */
export function verifyApiKeySecret(secret: string, storedHashHex: string): boolean {
  return safeEqual(hashApiKeySecret(secret), storedHashHex.toLowerCase());
}

/**
 * Display/log form of a key: `svc_<prefix>_…`. Anything that does not start like a key becomes
 * `[redacted]`; the secret part is never returned.
 */
export function redactApiKey(key: string): string {
  if (typeof key === 'string') {
    const match = /^svc_([a-z0-9]{12})_/.exec(key);
    if (match) {
      return `${API_KEY_TAG}_${match[1]}_…`;
    }
  }
  return '[redacted]';
}

/**
 * A random bearer-style token `<kind>_<43 base64url characters>` (32 random bytes), e.g. a relay token.
 * `kind` is 1–16 characters of `[a-z0-9]` starting with a letter, so the token splits unambiguously on
 * its first underscore.
 */
export function generateOpaqueToken(kind: string): string {
  if (!OPAQUE_KIND_PATTERN.test(kind)) {
    throw new TypeError('opaque token kind must match /^[a-z][a-z0-9]{0,15}$/');
  }
  return `${kind}_${randomSecret()}`;
}

/** SHA-256 hex of a whole opaque token; store this, never the token. */
export function hashOpaqueToken(token: string): string {
  return sha256Hex(token);
}

/** Constant-time check of a presented opaque token against its stored SHA-256 hex. */
export function verifyOpaqueToken(token: string, storedHashHex: string): boolean {
  return safeEqual(hashOpaqueToken(token), storedHashHex.toLowerCase());
}
