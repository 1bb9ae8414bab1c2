import { FrameScanner, closeFrame, isWebSocketKey, switchingProtocols } from './websocket-frames';

/** A client frame (masked) with `opcode`, `fin` and a payload of `length` bytes. */
function frame(opcode: number, length: number, fin = true): Buffer {
  const head = [(fin ? 0x80 : 0) | opcode];
  if (length < 126) head.push(0x80 | length);
  else if (length < 65_536) head.push(0x80 | 126, length >> 8, length & 0xff);
  else
    head.push(
      0x80 | 127,
      0,
      0,
      0,
      0,
      (length >>> 24) & 0xff,
      (length >> 16) & 0xff,
      (length >> 8) & 0xff,
      length & 0xff,
    );
  return Buffer.concat([Buffer.from(head), Buffer.from([1, 2, 3, 4]), Buffer.alloc(length, 7)]);
}

/** Feeds `bytes` in pieces of `size`; the first refusal's piece index, or -1. */
function feedInPieces(scanner: FrameScanner, bytes: Buffer, size: number): number {
  for (let i = 0, piece = 0; i < bytes.length; i += size, piece += 1)
    if (!scanner.feed(bytes.subarray(i, i + size))) return piece;
  return -1;
}

describe('FrameScanner', () => {
  test.each([1, 2, 3, 7, 13, 1000])(
    'when frames of 7-bit, 16-bit and 64-bit lengths arrive in pieces of %i bytes, then it ends on a boundary and refuses nothing under the limit',
    (size) => {
      const scanner = new FrameScanner(100_000);
      const bytes = Buffer.concat([frame(1, 5), frame(2, 300), frame(9, 4), frame(2, 70_000), frame(1, 0)]);
      expect(feedInPieces(scanner, bytes, size)).toBe(-1);
      expect(scanner.atBoundary).toBe(true);
    },
  );

  test('when a piece ends inside a header or a payload, then it is not on a boundary', () => {
    const scanner = new FrameScanner();
    const bytes = frame(2, 300);
    scanner.feed(bytes.subarray(0, 3));
    expect(scanner.atBoundary).toBe(false);
    scanner.feed(bytes.subarray(3, 20));
    expect(scanner.atBoundary).toBe(false);
    scanner.feed(bytes.subarray(20));
    expect(scanner.atBoundary).toBe(true);
  });

  test('when a message is larger than the limit, whole or as fragments summed, then the header that crosses it is refused', () => {
    expect(new FrameScanner(1024).feed(frame(2, 1025))).toBe(false);
    expect(new FrameScanner(1024).feed(frame(2, 1024))).toBe(true);
    const fragments = new FrameScanner(1024);
    expect(fragments.feed(frame(2, 600, false))).toBe(true);
    // A ping between fragments is not part of the message.
    expect(fragments.feed(frame(9, 100))).toBe(true);
    expect(fragments.feed(frame(0, 600, true))).toBe(false);
    // A finished message resets the count.
    const twice = new FrameScanner(1024);
    expect(twice.feed(Buffer.concat([frame(1, 1000), frame(1, 1000)]))).toBe(true);
  });
});

describe('handshake and close frames', () => {
  test('when a key is given, then the accept value is RFC 6455’s', () => {
    // The example of RFC 6455 §1.3.
    expect(switchingProtocols('dGhlIHNhbXBsZSBub25jZQ==')).toContain(
      'Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n\r\n',
    );
    expect(isWebSocketKey('dGhlIHNhbXBsZSBub25jZQ==')).toBe(true);
    expect(isWebSocketKey('short')).toBe(false);
    expect(isWebSocketKey(undefined)).toBe(false);
  });

  test('when a close frame is built, then it carries the code and a reason cut to 123 bytes', () => {
    const frameBytes = closeFrame(1009, 'x'.repeat(200));
    expect(frameBytes[0]).toBe(0x88);
    expect(frameBytes[1]).toBe(125);
    expect(frameBytes.readUInt16BE(2)).toBe(1009);
    const masked = closeFrame(1008, 'limit', true);
    expect(masked[1]).toBe(0x80 | 7);
    expect(masked.readUInt16BE(6)).toBe(1008);
  });
});
