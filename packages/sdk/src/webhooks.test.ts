import { createHash } from 'node:crypto';
import { deliveryHeaders, generateSigningSecret } from '@svc/contracts';
import {
  canonicalJson,
  EnvelopeVerificationError,
  verifyEnvelope,
  Webhook,
  WebhookVerificationError,
} from './index';
import type { DeliveryEventBody } from './index';

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

function now(): number {
  return Math.floor(Date.now() / 1000);
}

describe('Webhook', () => {
  const secret = generateSigningSecret();
  const body = JSON.stringify(EVENT);

  it('verifies a delivery signed by the platform (both header families) and returns the typed event', async () => {
    const headers = deliveryHeaders({ secret, deliveryId: 'dlv_1', timestamp: now(), body });
    const webhook = new Webhook(secret);
    const delivery = await webhook.verify(body, headers);
    expect(delivery).toMatchObject({ id: 'dlv_1', duplicate: false });
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
    try {
      new Webhook('not-a-secret-value');
    } catch (error) {
      expect(String(error)).not.toContain('not-a-secret-value');
    }
  });
});

describe('verifyEnvelope', () => {
  const payload = { title: 'Weekly', items: [{ b: 2, a: 1 }] };
  const envelope = {
    envelope_version: '1',
    artifact_id: 'art_1',
    workspace_id: 'ws_1',
    project_id: 'prj_1',
    invocation_id: 'inv_1',
    run_id: 'run_1',
    schema: { schema_id: 'sch_1', name: 'report', version: '1.0.0' },
    version: 1,
    payload,
    payload_sha256: createHash('sha256').update(canonicalJson(payload)).digest('hex'),
    created_by: { kind: 'agent' },
    created_at: '2026-01-01T00:00:00.000Z',
  };

  it('accepts an intact envelope of the expected invocation and schema', async () => {
    await expect(
      verifyEnvelope(envelope, {
        projectId: 'prj_1',
        invocationId: 'inv_1',
        schema: { name: 'report', versions: ['1.0.0'] },
      }),
    ).resolves.toMatchObject({ artifact_id: 'art_1' });
  });

  it.each([
    [
      'a tampered payload',
      { ...envelope, payload: { ...payload, title: 'Other' } },
      {},
      'envelope_payload_tampered',
    ],
    ['another invocation', envelope, { invocationId: 'inv_2' }, 'envelope_identity_mismatch'],
    [
      'an unsupported version',
      envelope,
      { schema: { name: 'report', versions: ['2.0.0'] } },
      'envelope_schema_unsupported',
    ],
    ['a malformed envelope', { ...envelope, payload_sha256: 'x' }, {}, 'envelope_malformed'],
  ])('refuses %s', async (_label, candidate, expected, code) => {
    const error = await verifyEnvelope(candidate, {
      projectId: 'prj_1',
      invocationId: 'inv_1',
      ...expected,
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EnvelopeVerificationError);
    expect((error as EnvelopeVerificationError).code).toBe(code);
  });
});
