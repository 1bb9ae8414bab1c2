import { createHash } from 'node:crypto';

/** RFC 6455 §1.3: appended to `Sec-WebSocket-Key` for the accept value. */
const ACCEPT_GUID = '258EAFA5-E914-47DA-95CA-C5AB0DC85B11';

/** Whether `key` is a valid `Sec-WebSocket-Key` (16 bytes, base64). */
export function isWebSocketKey(key: string | string[] | undefined): key is string {
  return typeof key === 'string' && /^[A-Za-z0-9+/]{22}==$/.test(key);
}

/** The `101 Switching Protocols` answer to a WebSocket handshake with `key`. */
export function switchingProtocols(key: string): string {
  const accept = createHash('sha1')
    .update(key + ACCEPT_GUID)
    .digest('base64');
  return (
    'HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n' +
    `Sec-WebSocket-Accept: ${accept}\r\n\r\n`
  );
}

/**
 * A close frame with `code` and `reason` (cut to 123 bytes). Masked (with a zero key, which RFC 6455 allows)
 * when it goes to a server, unmasked to a client.
 */
export function closeFrame(code: number, reason: string, masked = false): Buffer {
  const text = Buffer.from(reason, 'utf8').subarray(0, 123);
  const payload = Buffer.alloc(2 + text.length);
  payload.writeUInt16BE(code, 0);
  text.copy(payload, 2);
  const header = Buffer.from([0x88, (masked ? 0x80 : 0) | payload.length]);
  return Buffer.concat(masked ? [header, Buffer.alloc(4), payload] : [header, payload]);
}

/**
 * Follows one direction of a WebSocket by its frame headers only (payloads are skipped, never copied): it
 * knows whether the bytes seen so far end on a frame boundary (where a close frame may be written) and how
 * large the current message is (data frames of one message summed; control frames apart). Nothing is kept
 * but a few numbers and, when a header is split across reads, its first bytes.
 */
export class FrameScanner {
  /** Payload bytes of the current frame not seen yet. */
  private remaining = 0;
  /** The start of a frame header split across reads. */
  private pending: Buffer | undefined;
  /** Payload bytes of the current message so far. */
  private message = 0;

  constructor(private readonly maxMessageBytes = Number.POSITIVE_INFINITY) {}

  /** Whether everything seen so far ends on a frame boundary. */
  get atBoundary(): boolean {
    return this.remaining === 0 && this.pending === undefined;
  }

  /** Reads `chunk`; false as soon as a message is larger than the limit (the scanner is then done). */
  feed(chunk: Buffer): boolean {
    let i = 0;
    const length = chunk.length;
    while (i < length) {
      if (this.remaining > 0) {
        const take = Math.min(this.remaining, length - i);
        this.remaining -= take;
        i += take;
        continue;
      }
      // The header is read where it lies in the chunk (no copy, no view), unless it began in an earlier read.
      const held = this.pending;
      const h = held ? Buffer.concat([held, chunk.subarray(i, i + 14)]) : chunk;
      const at = held ? 0 : i;
      const available = h.length - at;
      if (available < 2) {
        this.pending = Buffer.from(h.subarray(at));
        return true;
      }
      const b0 = h[at]!;
      const b1 = h[at + 1]!;
      const len7 = b1 & 0x7f;
      const headerLength = 2 + (len7 === 126 ? 2 : len7 === 127 ? 8 : 0) + (b1 & 0x80 ? 4 : 0);
      if (available < headerLength) {
        this.pending = Buffer.from(h.subarray(at, at + Math.min(available, 14)));
        return true;
      }
      const payload =
        len7 === 126
          ? h.readUInt16BE(at + 2)
          : len7 === 127
            ? h.readUInt32BE(at + 2) * 2 ** 32 + h.readUInt32BE(at + 6)
            : len7;
      i += headerLength - (held ? held.length : 0);
      this.pending = undefined;
      this.remaining = payload;
      const opcode = b0 & 0x0f;
      if (opcode < 8) {
        // A text or binary frame starts a message; a continuation (0) adds to it.
        if (opcode !== 0) this.message = 0;
        this.message += payload;
        if (this.message > this.maxMessageBytes) return false;
        if (b0 & 0x80) this.message = 0;
      }
    }
    return true;
  }
}
