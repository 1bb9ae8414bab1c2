/**
 * The platform's signing side. Receivers verify with the SDK's `Webhook` (its own tests check it against
 * `deliveryHeaders`); here the official `standardwebhooks` package checks what the platform signs.
 */
import { Webhook, WebhookVerificationError } from 'standardwebhooks';
import { deliveryHeaders, generateSigningSecret, signDelivery } from './index';

const NOW = new Date('2026-03-01T12:00:00Z');
const NOW_SECONDS = Math.floor(NOW.getTime() / 1000);
const DELIVERY_ID = 'dlv_01JABCDEF';
const BODY = JSON.stringify({
  type: 'invocation.completed',
  data: { invocation_id: 'inv_one', note: 'ünïcødé ✓' },
});

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
      /delivery id/,
    );
    expect(() => signDelivery({ secret, deliveryId: '', timestamp: NOW_SECONDS, body: BODY })).toThrow(
      /delivery id/,
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

  it('when they sign, then their signature is ours, byte for byte', () => {
    expect(new Webhook(secret).sign(DELIVERY_ID, NOW, BODY)).toBe(
      signDelivery({ secret, deliveryId: DELIVERY_ID, timestamp: NOW_SECONDS, body: BODY }),
    );
  });
});
