import type { IncomingHttpHeaders } from 'node:http';
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import {
  createDeliveryDeduper,
  deliveryHeaders,
  DeliveryVerificationError,
  generateSigningSecret,
  signDelivery,
  verifyDelivery,
} from './index';
import type { DeliveryVerificationCode, VerifyDeliveryOptions } from './index';

const NOW = new Date('2026-03-01T12:00:00Z');
const NOW_SECONDS = Math.floor(NOW.getTime() / 1000);
const DELIVERY_ID = 'dlv_01JABCDEF';
const BODY = JSON.stringify({
  type: 'invocation.completed',
  data: { invocation_id: 'inv_one', note: 'ünïcødé ✓' },
});

function expectFailure(
  options: VerifyDeliveryOptions,
  code: DeliveryVerificationCode,
): DeliveryVerificationError {
  let caught: unknown;
  try {
    verifyDelivery(options);
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(DeliveryVerificationError);
  expect((caught as DeliveryVerificationError).code).toBe(code);
  return caught as DeliveryVerificationError;
}

describe('generateSigningSecret', () => {
  it('when called, then returns whsec_ and base64 of 32 fresh random bytes', () => {
    const first = generateSigningSecret();
    const second = generateSigningSecret();
    expect(first).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(Buffer.from(first.slice('whsec_'.length), 'base64')).toHaveLength(32);
    expect(first).not.toBe(second);
  });
});

describe('signDelivery', () => {
  it('when given the published Standard Webhooks vector, then produces its signature', () => {
    expect(
      signDelivery({
        secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
        deliveryId: 'msg_p5jXN8AQM9LWM0D4loKWxJek',
        timestamp: 1614265330,
        body: '{"test": 2432232314}',
      }),
    ).toBe('v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=');
  });

  it('when given several secrets, then emits one v1 entry per secret joined by one space', () => {
    const [a, b] = [generateSigningSecret(), generateSigningSecret()];
    const both = signDelivery({
      secret: [a, b],
      deliveryId: DELIVERY_ID,
      timestamp: NOW_SECONDS,
      body: BODY,
    });
    const onlyA = signDelivery({ secret: a, deliveryId: DELIVERY_ID, timestamp: NOW_SECONDS, body: BODY });
    const onlyB = signDelivery({ secret: [b], deliveryId: DELIVERY_ID, timestamp: NOW_SECONDS, body: BODY });
    expect(both).toBe(`${onlyA} ${onlyB}`);
    expect(onlyA).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
  });

  it('when a string and the Buffer of the same bytes are signed, then the signatures are equal', () => {
    const secret = generateSigningSecret();
    const base = { secret, deliveryId: DELIVERY_ID, timestamp: NOW_SECONDS };
    expect(signDelivery({ ...base, body: BODY })).toBe(signDelivery({ ...base, body: Buffer.from(BODY) }));
  });

  it.each([
    ['no prefix', 'MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'],
    ['empty key', 'whsec_'],
    ['not base64', 'whsec_not*base64*at*all*********'],
    ['unpadded base64', 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSwMfKQ9r8GKYqrTwjUPD8'],
    ['too short', `whsec_${Buffer.alloc(16, 7).toString('base64')}`],
    ['too long', `whsec_${Buffer.alloc(65, 7).toString('base64')}`],
  ])('when the secret is malformed (%s), then it refuses without echoing the secret', (_label, secret) => {
    const sign = () => signDelivery({ secret, deliveryId: DELIVERY_ID, timestamp: NOW_SECONDS, body: BODY });
    expect(sign).toThrow(TypeError);
    expect(sign).toThrow(/signing secret is malformed/);
    try {
      sign();
    } catch (error) {
      if (secret.length > 'whsec_'.length) expect((error as Error).message).not.toContain(secret);
    }
  });

  it('when one of several secrets is malformed, then the error names its position', () => {
    expect(() =>
      signDelivery({
        secret: [generateSigningSecret(), 'whsec_bad'],
        deliveryId: DELIVERY_ID,
        timestamp: NOW_SECONDS,
        body: BODY,
      }),
    ).toThrow('signing secret #2 is malformed');
  });

  it('when no secret is given, then it refuses', () => {
    expect(() =>
      signDelivery({ secret: [], deliveryId: DELIVERY_ID, timestamp: NOW_SECONDS, body: BODY }),
    ).toThrow('at least one signing secret is required');
  });

  it('when the delivery id or timestamp cannot be signed unambiguously, then it refuses', () => {
    const secret = generateSigningSecret();
    expect(() => signDelivery({ secret, deliveryId: 'dlv.1', timestamp: NOW_SECONDS, body: BODY })).toThrow(
      /deliveryId/,
    );
    expect(() => signDelivery({ secret, deliveryId: '', timestamp: NOW_SECONDS, body: BODY })).toThrow(
      /deliveryId/,
    );
    expect(() => signDelivery({ secret, deliveryId: DELIVERY_ID, timestamp: 1.5, body: BODY })).toThrow(
      /timestamp/,
    );
    expect(() => signDelivery({ secret, deliveryId: DELIVERY_ID, timestamp: -1, body: BODY })).toThrow(
      /timestamp/,
    );
  });
});

describe('deliveryHeaders', () => {
  it('when built, then carries the same values under both families and the JSON content type', () => {
    const secret = generateSigningSecret();
    const headers = deliveryHeaders({ secret, deliveryId: DELIVERY_ID, timestamp: NOW_SECONDS, body: BODY });
    const signature = signDelivery({ secret, deliveryId: DELIVERY_ID, timestamp: NOW_SECONDS, body: BODY });
    expect(headers).toEqual({
      'X-Svc-Delivery-ID': DELIVERY_ID,
      'X-Svc-Timestamp': String(NOW_SECONDS),
      'X-Svc-Signature': signature,
      'webhook-id': DELIVERY_ID,
      'webhook-timestamp': String(NOW_SECONDS),
      'webhook-signature': signature,
      'content-type': 'application/json',
    });
  });
});

describe('verifyDelivery', () => {
  const secret = generateSigningSecret();
  const signed = (overrides: { secret?: string | string[]; deliveryId?: string; timestamp?: number } = {}) =>
    deliveryHeaders({
      secret: overrides.secret ?? secret,
      deliveryId: overrides.deliveryId ?? DELIVERY_ID,
      timestamp: overrides.timestamp ?? NOW_SECONDS,
      body: BODY,
    });

  it('when the delivery is genuine, then returns the id, the timestamp and the parsed event', () => {
    expect(verifyDelivery({ secret, headers: signed(), body: BODY, now: NOW })).toEqual({
      deliveryId: DELIVERY_ID,
      timestamp: NOW_SECONDS,
      event: JSON.parse(BODY),
    });
  });

  it('when the body arrives as a Buffer or a string, then both verify', () => {
    const headers = signed();
    expect(verifyDelivery({ secret, headers, body: Buffer.from(BODY, 'utf8'), now: NOW }).event).toEqual(
      JSON.parse(BODY),
    );
    expect(verifyDelivery({ secret, headers, body: BODY, now: NOW }).deliveryId).toBe(DELIVERY_ID);
  });

  it('when the body is re-serialised instead of passed raw, then the signature does not match', () => {
    const pretty = JSON.stringify(JSON.parse(BODY), null, 2);
    expectFailure({ secret, headers: signed(), body: pretty, now: NOW }, 'signature_invalid');
  });

  describe('rotation', () => {
    const oldSecret = generateSigningSecret();
    const newSecret = generateSigningSecret();

    it('when signed with both secrets, then a receiver holding either one accepts it', () => {
      const headers = signed({ secret: [oldSecret, newSecret] });
      expect(verifyDelivery({ secret: oldSecret, headers, body: BODY, now: NOW }).deliveryId).toBe(
        DELIVERY_ID,
      );
      expect(verifyDelivery({ secret: newSecret, headers, body: BODY, now: NOW }).deliveryId).toBe(
        DELIVERY_ID,
      );
    });

    it('when the receiver holds both secrets, then a delivery signed with either one verifies', () => {
      for (const signer of [oldSecret, newSecret]) {
        const headers = signed({ secret: signer });
        expect(
          verifyDelivery({ secret: [oldSecret, newSecret], headers, body: BODY, now: NOW }).timestamp,
        ).toBe(NOW_SECONDS);
      }
    });

    it('when no secret matches, then signature_invalid names no secret', () => {
      const error = expectFailure(
        { secret: [oldSecret, newSecret], headers: signed(), body: BODY, now: NOW },
        'signature_invalid',
      );
      for (const value of [secret, oldSecret, newSecret]) {
        expect(error.message).not.toContain(value);
        expect(error.message).not.toContain(value.slice('whsec_'.length));
      }
    });
  });

  describe('tampering', () => {
    it('when the body changes, then signature_invalid', () => {
      const tampered = BODY.replace('inv_one', 'inv_two');
      expectFailure({ secret, headers: signed(), body: tampered, now: NOW }, 'signature_invalid');
    });

    it('when the delivery id changes, then signature_invalid', () => {
      const headers = { ...signed(), 'X-Svc-Delivery-ID': 'dlv_other', 'webhook-id': 'dlv_other' };
      expectFailure({ secret, headers, body: BODY, now: NOW }, 'signature_invalid');
    });

    it('when the timestamp changes within tolerance, then signature_invalid', () => {
      const moved = String(NOW_SECONDS - 1);
      const headers = { ...signed(), 'X-Svc-Timestamp': moved, 'webhook-timestamp': moved };
      expectFailure({ secret, headers, body: BODY, now: NOW }, 'signature_invalid');
    });

    it('when the signature is altered, carries another version, or is padded with junk, then signature_invalid', () => {
      const good = signed()['X-Svc-Signature'];
      const value = good.slice('v1,'.length);
      const flipped = `v1,${value[0] === 'A' ? 'B' : 'A'}${value.slice(1)}`;
      for (const signature of [flipped, `v1a,${value}`, `v2,${value}`, `v1,${value}!!`, value, 'v1,']) {
        expectFailure(
          {
            secret,
            headers: {
              'x-svc-delivery-id': DELIVERY_ID,
              'x-svc-timestamp': String(NOW_SECONDS),
              'x-svc-signature': signature,
            },
            body: BODY,
            now: NOW,
          },
          'signature_invalid',
        );
      }
    });

    it('when the header lists a wrong signature before the right one, then it still verifies', () => {
      const good = signed()['X-Svc-Signature'];
      const headers = {
        'webhook-id': DELIVERY_ID,
        'webhook-timestamp': String(NOW_SECONDS),
        'webhook-signature': `v1,AAAA v1a,${good.slice(3)} ${good}`,
      };
      expect(verifyDelivery({ secret, headers, body: BODY, now: NOW }).deliveryId).toBe(DELIVERY_ID);
    });
  });

  describe('timestamp', () => {
    it('when the delivery is older or newer than the tolerance, then timestamp_out_of_tolerance', () => {
      expectFailure(
        { secret, headers: signed({ timestamp: NOW_SECONDS - 301 }), body: BODY, now: NOW },
        'timestamp_out_of_tolerance',
      );
      expectFailure(
        { secret, headers: signed({ timestamp: NOW_SECONDS + 301 }), body: BODY, now: NOW },
        'timestamp_out_of_tolerance',
      );
    });

    it('when the delivery is exactly at the tolerance edge in either direction, then it verifies', () => {
      for (const timestamp of [NOW_SECONDS - 300, NOW_SECONDS + 300]) {
        expect(
          verifyDelivery({ secret, headers: signed({ timestamp }), body: BODY, now: NOW }).timestamp,
        ).toBe(timestamp);
      }
    });

    it('when a custom tolerance is given, then it applies', () => {
      const headers = signed({ timestamp: NOW_SECONDS - 30 });
      expectFailure(
        { secret, headers, body: BODY, now: NOW, toleranceSeconds: 10 },
        'timestamp_out_of_tolerance',
      );
      expect(verifyDelivery({ secret, headers, body: BODY, now: NOW, toleranceSeconds: 30 }).deliveryId).toBe(
        DELIVERY_ID,
      );
    });

    it('when no clock is given, then the system clock is used', () => {
      const headers = deliveryHeaders({
        secret,
        deliveryId: DELIVERY_ID,
        timestamp: Math.floor(Date.now() / 1000),
        body: BODY,
      });
      expect(verifyDelivery({ secret, headers, body: BODY }).deliveryId).toBe(DELIVERY_ID);
      expectFailure(
        { secret, headers: signed({ timestamp: 1_000_000 }), body: BODY },
        'timestamp_out_of_tolerance',
      );
    });

    it.each(['soon', '17e8', '-5', '1.5', 'NaN', '99999999999999999'])(
      'when the timestamp header is %p, then timestamp_invalid',
      (value) => {
        const headers = { ...signed(), 'X-Svc-Timestamp': value };
        expectFailure({ secret, headers, body: BODY, now: NOW }, 'timestamp_invalid');
      },
    );
  });

  describe('headers', () => {
    it('when only the X-Svc family is present, then it verifies', () => {
      const all = signed();
      const headers = {
        'X-Svc-Delivery-ID': all['X-Svc-Delivery-ID'],
        'X-Svc-Timestamp': all['X-Svc-Timestamp'],
        'X-Svc-Signature': all['X-Svc-Signature'],
      };
      expect(verifyDelivery({ secret, headers, body: BODY, now: NOW }).deliveryId).toBe(DELIVERY_ID);
    });

    it('when only the webhook-* family is present, in any case, then it verifies', () => {
      const all = signed();
      const headers = {
        'Webhook-Id': all['webhook-id'],
        'WEBHOOK-TIMESTAMP': all['webhook-timestamp'],
        'webhook-signature': all['webhook-signature'],
      };
      expect(verifyDelivery({ secret, headers, body: BODY, now: NOW }).deliveryId).toBe(DELIVERY_ID);
    });

    it('when the X-Svc family is incomplete but webhook-* is complete, then webhook-* is used', () => {
      const { 'X-Svc-Signature': _dropped, ...headers } = signed();
      expect(verifyDelivery({ secret, headers, body: BODY, now: NOW }).deliveryId).toBe(DELIVERY_ID);
    });

    it('when given a fetch Headers object, then it verifies', () => {
      const headers = new Headers(Object.entries(signed()));
      expect(verifyDelivery({ secret, headers, body: BODY, now: NOW }).deliveryId).toBe(DELIVERY_ID);
    });

    it('when given node IncomingHttpHeaders (lower-case keys), then it verifies', () => {
      const headers: IncomingHttpHeaders = Object.fromEntries(
        Object.entries(signed()).map(([name, value]) => [name.toLowerCase(), value]),
      );
      headers['content-length'] = String(Buffer.byteLength(BODY));
      headers['set-cookie'] = ['a=1', 'b=2'];
      expect(verifyDelivery({ secret, headers, body: Buffer.from(BODY), now: NOW }).deliveryId).toBe(
        DELIVERY_ID,
      );
    });

    it('when a header family is only partly present, then headers_missing', () => {
      const all = signed();
      expectFailure({ secret, headers: {}, body: BODY, now: NOW }, 'headers_missing');
      expectFailure(
        {
          secret,
          headers: {
            'X-Svc-Delivery-ID': all['X-Svc-Delivery-ID'],
            'webhook-signature': all['webhook-signature'],
          },
          body: BODY,
          now: NOW,
        },
        'headers_missing',
      );
      expectFailure(
        {
          secret,
          headers: new Headers({
            'webhook-id': DELIVERY_ID,
            'webhook-timestamp': '',
            'webhook-signature': 'v1,x',
          }),
          body: BODY,
          now: NOW,
        },
        'headers_missing',
      );
    });

    it('when the delivery id contains a full stop, then it is refused as malformed', () => {
      const headers = { ...signed(), 'X-Svc-Delivery-ID': 'dlv.1' };
      expectFailure({ secret, headers, body: BODY, now: NOW }, 'headers_missing');
    });
  });

  it('when the signed body is not JSON, then body_invalid_json after the signature check', () => {
    const body = 'not json';
    const headers = deliveryHeaders({ secret, deliveryId: DELIVERY_ID, timestamp: NOW_SECONDS, body });
    expectFailure({ secret, headers, body, now: NOW }, 'body_invalid_json');
    expectFailure({ secret: generateSigningSecret(), headers, body, now: NOW }, 'signature_invalid');
  });

  it('when the verifier is configured with a malformed secret, then it throws a TypeError, not a verification error', () => {
    expect(() => verifyDelivery({ secret: 'not-a-secret', headers: signed(), body: BODY, now: NOW })).toThrow(
      TypeError,
    );
  });
});

describe('interoperability with the standardwebhooks package', () => {
  const secret = generateSigningSecret();

  it('when we sign, then their Webhook#verify accepts it', () => {
    const timestamp = Math.floor(Date.now() / 1000);
    const headers = deliveryHeaders({ secret, deliveryId: DELIVERY_ID, timestamp, body: BODY });
    expect(new Webhook(secret).verify(BODY, headers)).toEqual(JSON.parse(BODY));
    expect(new Webhook(secret).verify(Buffer.from(BODY), headers)).toEqual(JSON.parse(BODY));
  });

  it('when we sign with two secrets, then their verify accepts it with either secret and rejects a third', () => {
    const other = generateSigningSecret();
    const timestamp = Math.floor(Date.now() / 1000);
    const headers = deliveryHeaders({
      secret: [secret, other],
      deliveryId: DELIVERY_ID,
      timestamp,
      body: BODY,
    });
    expect(new Webhook(secret).verify(BODY, headers)).toEqual(JSON.parse(BODY));
    expect(new Webhook(other).verify(BODY, headers)).toEqual(JSON.parse(BODY));
    expect(() => new Webhook(generateSigningSecret()).verify(BODY, headers)).toThrow(
      WebhookVerificationError,
    );
  });

  it('when we sign and the body is tampered, then their verify rejects it too', () => {
    const timestamp = Math.floor(Date.now() / 1000);
    const headers = deliveryHeaders({ secret, deliveryId: DELIVERY_ID, timestamp, body: BODY });
    expect(() => new Webhook(secret).verify(`${BODY} `, headers)).toThrow(WebhookVerificationError);
  });

  it('when they sign, then our verifyDelivery accepts it under the webhook-* headers', () => {
    const signature = new Webhook(secret).sign(DELIVERY_ID, NOW, BODY);
    const headers = {
      'webhook-id': DELIVERY_ID,
      'webhook-timestamp': String(NOW_SECONDS),
      'webhook-signature': signature,
    };
    expect(signature).toBe(
      signDelivery({ secret, deliveryId: DELIVERY_ID, timestamp: NOW_SECONDS, body: BODY }),
    );
    expect(verifyDelivery({ secret, headers, body: BODY, now: NOW })).toEqual({
      deliveryId: DELIVERY_ID,
      timestamp: NOW_SECONDS,
      event: JSON.parse(BODY),
    });
    expect(verifyDelivery({ secret, headers, body: Buffer.from(BODY), now: NOW }).deliveryId).toBe(
      DELIVERY_ID,
    );
  });

  it('when they sign with another secret, then our verifyDelivery refuses it', () => {
    const signature = new Webhook(generateSigningSecret()).sign(DELIVERY_ID, NOW, BODY);
    const headers = {
      'webhook-id': DELIVERY_ID,
      'webhook-timestamp': String(NOW_SECONDS),
      'webhook-signature': signature,
    };
    expectFailure({ secret, headers, body: BODY, now: NOW }, 'signature_invalid');
  });
});

describe('createDeliveryDeduper', () => {
  function clock(start = 0) {
    let time = start;
    return { now: () => time, advance: (ms: number) => (time += ms) };
  }

  it('when an id arrives twice within the ttl, then the second arrival is reported as seen', () => {
    const deduper = createDeliveryDeduper();
    expect(deduper.seen('dlv_a')).toBe(false);
    expect(deduper.seen('dlv_a')).toBe(true);
    expect(deduper.seen('dlv_b')).toBe(false);
  });

  it('when the ttl has passed, then the id is new again (and remembered afresh)', () => {
    const time = clock();
    const deduper = createDeliveryDeduper({ ttlMs: 1_000, now: time.now });
    expect(deduper.seen('dlv_a')).toBe(false);
    time.advance(999);
    expect(deduper.seen('dlv_a')).toBe(true);
    time.advance(1);
    expect(deduper.seen('dlv_a')).toBe(false);
    time.advance(500);
    expect(deduper.seen('dlv_a')).toBe(true);
  });

  it('when more than maxEntries ids are recorded, then the oldest are forgotten first', () => {
    const deduper = createDeliveryDeduper({ maxEntries: 2 });
    expect(deduper.seen('dlv_1')).toBe(false);
    expect(deduper.seen('dlv_2')).toBe(false);
    expect(deduper.seen('dlv_3')).toBe(false);
    expect(deduper.seen('dlv_3')).toBe(true);
    expect(deduper.seen('dlv_2')).toBe(true);
    expect(deduper.seen('dlv_1')).toBe(false);
  });

  it('when the default ttl is used, then an id is remembered for 24 hours', () => {
    const time = clock(1_700_000_000_000);
    const deduper = createDeliveryDeduper({ now: time.now });
    deduper.seen('dlv_a');
    time.advance(24 * 60 * 60 * 1000 - 1);
    expect(deduper.seen('dlv_a')).toBe(true);
    time.advance(1);
    expect(deduper.seen('dlv_a')).toBe(false);
  });

  it('when given nonsensical limits, then it refuses', () => {
    expect(() => createDeliveryDeduper({ ttlMs: 0 })).toThrow(TypeError);
    expect(() => createDeliveryDeduper({ maxEntries: 0 })).toThrow(TypeError);
  });
});
