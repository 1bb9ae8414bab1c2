/**
 * `Webhook` against the platform's own signer (`deliveryHeaders` of `@svc/contracts`, what the delivery worker
 * sends), so the verifier and the signer cannot drift apart; the signer is itself checked against the official
 * `standardwebhooks` package in contracts.
 */
import type { IncomingHttpHeaders } from 'node:http';
import { deliveryHeaders, generateSigningSecret } from '@svc/contracts';
import { ArgumentError, Webhook, WebhookVerificationError } from './index';
import type { DeliveryEventBody, WebhookHeaders, WebhookOptions, WebhookVerificationCode } from './index';

const EVENT: DeliveryEventBody = {
  type: 'invocation.completed',
  timestamp: '2026-01-01T00:00:00.000Z',
  data: {
    workspace_id: 'ws_1',
    project_id: 'prj_1',
    invocation_id: 'inv_1',
    state: 'completed',
    attention: 'none',
    attention_reason: null,
    correlation_id: null,
    artifact: { artifact_id: 'art_1', schema_id: 'sch_1', schema_name: 'report', schema_version: '1.0.0' },
  },
};
const BODY = JSON.stringify(EVENT);
const NOW_MS = Date.parse('2026-03-01T12:00:00Z');
const NOW_SECONDS = NOW_MS / 1000;
const DELIVERY_ID = 'dlv_01JABCDEF';

function now(): number {
  return Math.floor(Date.now() / 1000);
}

/** The platform's headers of a delivery of `BODY` (or `body`), signed at `NOW_SECONDS` unless told otherwise. */
function signed(
  secret: string | string[],
  options: { deliveryId?: string; timestamp?: number; body?: string } = {},
): Record<string, string> {
  return deliveryHeaders({
    secret,
    deliveryId: options.deliveryId ?? DELIVERY_ID,
    timestamp: options.timestamp ?? NOW_SECONDS,
    body: options.body ?? BODY,
  });
}

/** A `Webhook` whose clock reads `NOW_MS`. */
function atNow(secret: string | string[], options: WebhookOptions = {}): Webhook {
  return new Webhook(secret, { now: () => NOW_MS, ...options });
}

async function refusal(
  webhook: Webhook,
  headers: WebhookHeaders,
  body: string = BODY,
): Promise<WebhookVerificationCode> {
  const error = await webhook.verify(body, headers).catch((e: unknown) => e);
  expect(error).toBeInstanceOf(WebhookVerificationError);
  return (error as WebhookVerificationError).code;
}

describe('Webhook', () => {
  const secret = generateSigningSecret();
  const body = BODY;

  it('verifies a delivery signed by the platform (both header families) and returns the typed event', async () => {
    const headers = deliveryHeaders({ secret, deliveryId: 'dlv_1', timestamp: now(), body });
    const webhook = new Webhook(secret);
    const delivery = await webhook.verify(body, headers);
    expect(delivery).toMatchObject({ id: 'dlv_1', duplicate: false });
    if (delivery.event.type === 'delivery_subscription.test')
      throw new Error('an invocation event was signed');
    expect(delivery.event.data.invocation_id).toBe('inv_1');
    const svcOnly = new Webhook(secret, { dedupe: false });
    const fromFetchHeaders = new Headers({
      'x-svc-delivery-id': headers['X-Svc-Delivery-ID'],
      'x-svc-timestamp': headers['X-Svc-Timestamp'],
      'x-svc-signature': headers['X-Svc-Signature'],
    });
    expect((await svcOnly.verify(Buffer.from(body), fromFetchHeaders)).event).toEqual(EVENT);
  });

  it('flags a repeated delivery id as duplicate until it is forgotten', async () => {
    const webhook = new Webhook(secret);
    const headers = deliveryHeaders({ secret, deliveryId: 'dlv_2', timestamp: now(), body });
    expect((await webhook.verify(body, headers)).duplicate).toBe(false);
    expect((await webhook.verify(body, headers)).duplicate).toBe(true);
    webhook.forget('dlv_2');
    expect((await webhook.verify(body, headers)).duplicate).toBe(false);
  });

  it('accepts either secret during a rotation and signs like the platform', async () => {
    const next = generateSigningSecret();
    const headers = deliveryHeaders({ secret: [secret, next], deliveryId: 'dlv_3', timestamp: now(), body });
    await expect(new Webhook(next).verify(body, headers)).resolves.toMatchObject({ id: 'dlv_3' });
    const ts = now();
    expect(await new Webhook(secret).sign('dlv_4', ts, body)).toBe(
      deliveryHeaders({ secret, deliveryId: 'dlv_4', timestamp: ts, body })['X-Svc-Signature'],
    );
    expect(await new Webhook([secret, next]).sign('dlv_4', ts, body)).toBe(
      deliveryHeaders({ secret: [secret, next], deliveryId: 'dlv_4', timestamp: ts, body })[
        'X-Svc-Signature'
      ],
    );
  });

  it('signs the published Standard Webhooks vector', async () => {
    const webhook = new Webhook('whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw');
    expect(await webhook.sign('msg_p5jXN8AQM9LWM0D4loKWxJek', 1614265330, '{"test": 2432232314}')).toBe(
      'v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=',
    );
  });

  it.each([
    [
      'a changed body',
      (h: Record<string, string>) => ({ headers: h, body: body.replace('inv_1', 'inv_2') }),
      'signature_invalid',
    ],
    ['missing headers', () => ({ headers: {}, body }), 'headers_missing'],
    [
      'a stale timestamp',
      (h: Record<string, string>) => ({
        headers: { ...h, 'webhook-timestamp': String(now() - 3600), 'X-Svc-Timestamp': String(now() - 3600) },
        body,
      }),
      'timestamp_out_of_tolerance',
    ],
    [
      'a bad timestamp',
      (h: Record<string, string>) => ({
        headers: { ...h, 'webhook-timestamp': 'soon', 'X-Svc-Timestamp': 'soon' },
        body,
      }),
      'timestamp_invalid',
    ],
  ])('refuses %s', async (_label, tamper, code) => {
    const headers = deliveryHeaders({ secret, deliveryId: 'dlv_5', timestamp: now(), body });
    const input = tamper(headers as unknown as Record<string, string>);
    const error = await new Webhook(secret).verify(input.body, input.headers).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(WebhookVerificationError);
    expect((error as WebhookVerificationError).code).toBe(code);
  });

  it('refuses another secret, and a malformed secret without printing it', async () => {
    const headers = deliveryHeaders({ secret, deliveryId: 'dlv_6', timestamp: now(), body });
    await expect(new Webhook(generateSigningSecret()).verify(body, headers)).rejects.toMatchObject({
      code: 'signature_invalid',
    });
    expect(() => new Webhook('whsec_short')).toThrow(/malformed/);
    expect(() => new Webhook('whsec_short')).toThrow(
      expect.objectContaining({ code: 'argument_invalid', argument: 'secret' }),
    );
    expect(() => new Webhook(undefined as unknown as string)).toThrow(ArgumentError);
    try {
      new Webhook('not-a-secret-value');
    } catch (error) {
      expect(String(error)).not.toContain('not-a-secret-value');
    }
  });
});

describe('Webhook.verify', () => {
  const secret = generateSigningSecret();

  it('when the body is re-serialised instead of passed raw, then the signature does not match', async () => {
    const pretty = JSON.stringify(JSON.parse(BODY), null, 2);
    expect(await refusal(atNow(secret), signed(secret), pretty)).toBe('signature_invalid');
  });

  it('when the signed body is not JSON, then body_invalid_json, after the signature check', async () => {
    const headers = signed(secret, { body: 'not json' });
    expect(await refusal(atNow(secret), headers, 'not json')).toBe('body_invalid_json');
    expect(await refusal(atNow(generateSigningSecret()), headers, 'not json')).toBe('signature_invalid');
  });

  describe('rotation', () => {
    const oldSecret = generateSigningSecret();
    const newSecret = generateSigningSecret();

    it('when the receiver holds both secrets, then a delivery signed with either one verifies', async () => {
      for (const signer of [oldSecret, newSecret]) {
        const delivery = await atNow([oldSecret, newSecret]).verify(BODY, signed(signer));
        expect(delivery.timestamp).toBe(NOW_SECONDS);
      }
    });

    it('when no secret matches, then signature_invalid names no secret', async () => {
      const error = (await atNow([oldSecret, newSecret])
        .verify(BODY, signed(secret))
        .catch((e: unknown) => e)) as WebhookVerificationError;
      expect(error.code).toBe('signature_invalid');
      for (const value of [secret, oldSecret, newSecret]) {
        expect(error.message).not.toContain(value);
        expect(error.message).not.toContain(value.slice('whsec_'.length));
      }
    });
  });

  describe('tampering', () => {
    it('when the delivery id or the timestamp (within tolerance) changes, then signature_invalid', async () => {
      const moved = String(NOW_SECONDS - 1);
      for (const headers of [
        { ...signed(secret), 'X-Svc-Delivery-ID': 'dlv_other', 'webhook-id': 'dlv_other' },
        { ...signed(secret), 'X-Svc-Timestamp': moved, 'webhook-timestamp': moved },
      ]) {
        expect(await refusal(atNow(secret), headers)).toBe('signature_invalid');
      }
    });

    it('when the signature is altered, carries another version, or is padded with junk, then signature_invalid', async () => {
      const value = signed(secret)['X-Svc-Signature']!.slice('v1,'.length);
      const flipped = `v1,${value[0] === 'A' ? 'B' : 'A'}${value.slice(1)}`;
      for (const signature of [flipped, `v1a,${value}`, `v2,${value}`, `v1,${value}!!`, value, 'v1,']) {
        const headers = {
          'x-svc-delivery-id': DELIVERY_ID,
          'x-svc-timestamp': String(NOW_SECONDS),
          'x-svc-signature': signature,
        };
        expect(await refusal(atNow(secret), headers)).toBe('signature_invalid');
      }
    });

    it('when the header lists a wrong signature before the right one, then it still verifies', async () => {
      const good = signed(secret)['X-Svc-Signature']!;
      const headers = {
        'webhook-id': DELIVERY_ID,
        'webhook-timestamp': String(NOW_SECONDS),
        'webhook-signature': `v1,AAAA v1a,${good.slice(3)} ${good}`,
      };
      expect((await atNow(secret).verify(BODY, headers)).id).toBe(DELIVERY_ID);
    });
  });

  describe('timestamp', () => {
    it('when the delivery is exactly at the tolerance edge, then it verifies; a second beyond, then it is refused', async () => {
      for (const timestamp of [NOW_SECONDS - 300, NOW_SECONDS + 300]) {
        expect((await atNow(secret).verify(BODY, signed(secret, { timestamp }))).timestamp).toBe(timestamp);
      }
      for (const timestamp of [NOW_SECONDS - 301, NOW_SECONDS + 301]) {
        expect(await refusal(atNow(secret), signed(secret, { timestamp }))).toBe(
          'timestamp_out_of_tolerance',
        );
      }
    });

    it('when a custom tolerance is given, then it applies', async () => {
      const headers = signed(secret, { timestamp: NOW_SECONDS - 30 });
      expect(await refusal(atNow(secret, { toleranceSeconds: 10 }), headers)).toBe(
        'timestamp_out_of_tolerance',
      );
      expect((await atNow(secret, { toleranceSeconds: 30 }).verify(BODY, headers)).id).toBe(DELIVERY_ID);
    });

    it('when no clock is given, then the system clock is used', async () => {
      const fresh = signed(secret, { timestamp: now() });
      expect((await new Webhook(secret).verify(BODY, fresh)).id).toBe(DELIVERY_ID);
      expect(await refusal(new Webhook(secret), signed(secret, { timestamp: 1_000_000 }))).toBe(
        'timestamp_out_of_tolerance',
      );
    });

    it.each(['soon', '17e8', '-5', '1.5', 'NaN', '99999999999999999'])(
      'when the timestamp header is %p, then timestamp_invalid',
      async (value) => {
        const headers = { ...signed(secret), 'X-Svc-Timestamp': value };
        expect(await refusal(atNow(secret), headers)).toBe('timestamp_invalid');
      },
    );
  });

  describe('headers', () => {
    it('when only one family is present, in any letter case, then it verifies', async () => {
      const all = signed(secret);
      const svc = {
        'X-Svc-Delivery-ID': all['X-Svc-Delivery-ID'],
        'X-Svc-Timestamp': all['X-Svc-Timestamp'],
        'X-Svc-Signature': all['X-Svc-Signature'],
      };
      const standard = {
        'Webhook-Id': all['webhook-id'],
        'WEBHOOK-TIMESTAMP': all['webhook-timestamp'],
        'webhook-signature': all['webhook-signature'],
      };
      for (const headers of [svc, standard]) {
        expect((await atNow(secret, { dedupe: false }).verify(BODY, headers)).id).toBe(DELIVERY_ID);
      }
    });

    it('when the X-Svc family is incomplete but webhook-* is complete, then webhook-* is used', async () => {
      const { 'X-Svc-Signature': _dropped, ...headers } = signed(secret);
      expect((await atNow(secret).verify(BODY, headers)).id).toBe(DELIVERY_ID);
    });

    it('when given node IncomingHttpHeaders (lower-case keys, repeated headers), then it verifies', async () => {
      const headers: IncomingHttpHeaders = Object.fromEntries(
        Object.entries(signed(secret)).map(([name, value]) => [name.toLowerCase(), value]),
      );
      headers['content-length'] = String(Buffer.byteLength(BODY));
      headers['set-cookie'] = ['a=1', 'b=2'];
      expect((await atNow(secret).verify(Buffer.from(BODY), headers)).id).toBe(DELIVERY_ID);
    });

    it('when no family is present in full, then headers_missing', async () => {
      const all = signed(secret);
      for (const headers of [
        {},
        { 'X-Svc-Delivery-ID': all['X-Svc-Delivery-ID']!, 'webhook-signature': all['webhook-signature']! },
        new Headers({ 'webhook-id': DELIVERY_ID, 'webhook-timestamp': '', 'webhook-signature': 'v1,x' }),
      ]) {
        expect(await refusal(atNow(secret), headers)).toBe('headers_missing');
      }
    });

    it('when the delivery id contains a full stop, then it is refused as malformed', async () => {
      const headers = { ...signed(secret), 'X-Svc-Delivery-ID': 'dlv.1' };
      expect(await refusal(atNow(secret), headers)).toBe('headers_missing');
    });
  });
});

describe('Webhook deduplication (in memory, this process only)', () => {
  const secret = generateSigningSecret();

  /** A clock for the webhook, and the delivery of `id` signed at its current time (a redelivery keeps the id). */
  function receiver(options: WebhookOptions = {}, start = NOW_MS) {
    let time = start;
    const webhook = new Webhook(secret, { now: () => time, ...options });
    return {
      advance: (ms: number) => (time += ms),
      duplicate: async (id: string) =>
        (await webhook.verify(BODY, signed(secret, { deliveryId: id, timestamp: Math.floor(time / 1000) })))
          .duplicate,
    };
  }

  it('when an id arrives twice within the ttl, then the second arrival is a duplicate', async () => {
    const r = receiver();
    expect(await r.duplicate('dlv_a')).toBe(false);
    expect(await r.duplicate('dlv_a')).toBe(true);
    expect(await r.duplicate('dlv_b')).toBe(false);
  });

  it('when the ttl has passed, then the id is new again (and remembered afresh)', async () => {
    const r = receiver({ dedupeTtlMs: 1_000 });
    expect(await r.duplicate('dlv_a')).toBe(false);
    r.advance(999);
    expect(await r.duplicate('dlv_a')).toBe(true);
    r.advance(1);
    expect(await r.duplicate('dlv_a')).toBe(false);
    r.advance(500);
    expect(await r.duplicate('dlv_a')).toBe(true);
  });

  it('when the default ttl is used, then an id is remembered for 24 hours', async () => {
    const r = receiver();
    await r.duplicate('dlv_a');
    r.advance(24 * 60 * 60 * 1000 - 1);
    expect(await r.duplicate('dlv_a')).toBe(true);
    r.advance(1);
    expect(await r.duplicate('dlv_a')).toBe(false);
  });

  it('when more than dedupeMaxEntries ids are remembered, then the oldest are forgotten first', async () => {
    const r = receiver({ dedupeMaxEntries: 2 });
    for (const id of ['dlv_1', 'dlv_2', 'dlv_3']) expect(await r.duplicate(id)).toBe(false);
    expect(await r.duplicate('dlv_3')).toBe(true);
    expect(await r.duplicate('dlv_2')).toBe(true);
    expect(await r.duplicate('dlv_1')).toBe(false);
  });

  it('when deduplication is off, then a repeat is not flagged', async () => {
    const r = receiver({ dedupe: false });
    expect(await r.duplicate('dlv_a')).toBe(false);
    expect(await r.duplicate('dlv_a')).toBe(false);
  });

  it('when given nonsensical limits, then it refuses', () => {
    expect(() => new Webhook(secret, { dedupeTtlMs: 0 })).toThrow(ArgumentError);
    expect(() => new Webhook(secret, { dedupeMaxEntries: 0 })).toThrow(ArgumentError);
  });
});
