import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * Compares two strings in constant time with respect to their content and length.
 *
 * `timingSafeEqual` needs equal-length inputs, and checking the lengths first would leak them, so both
 * strings are hashed to fixed-length SHA-256 digests and the digests are compared. Two different strings
 * with the same digest would be a SHA-256 collision.
 */
export function safeEqual(a: string, b: string): boolean {
  const digestA = createHash('sha256').update(a, 'utf8').digest();
  const digestB = createHash('sha256').update(b, 'utf8').digest();
  return timingSafeEqual(digestA, digestB);
}
