import { randomFillSync } from 'node:crypto';

const ALPHABET = '0123456789abcdefghjkmnpqrstvwxyz'; // Crockford base32, lower case

/**
 * Random bytes drawn from the system's generator in batches, 16 per id, as Node's own `randomUUID` does: one
 * call into the generator per 256 ids instead of one per id (each call costs far more than the bytes).
 */
const POOL = Buffer.alloc(16 * 256);
let poolOffset = POOL.length;

function sixteenRandomBytes(): Buffer {
  if (poolOffset === POOL.length) {
    randomFillSync(POOL);
    poolOffset = 0;
  }
  const bytes = POOL.subarray(poolOffset, poolOffset + 16);
  poolOffset += 16;
  return bytes;
}

/**
 * A prefixed, time-sortable identifier: `<prefix>_<26 chars>` (48 bits of milliseconds, 80 random bits,
 * ULID layout). Sorting ids sorts by creation time, which keeps "oldest first" orders stable.
 */
export function newId(prefix: string, now: number = Date.now()): string {
  let time = '';
  let t = now;
  for (let i = 0; i < 10; i += 1) {
    time = (ALPHABET[t % 32] as string) + time;
    t = Math.floor(t / 32);
  }
  const bytes = sixteenRandomBytes();
  let random = '';
  for (let i = 0; i < 16; i += 1) random += ALPHABET[(bytes[i] as number) % 32];
  return `${prefix}_${time}${random}`;
}
