import { deliveryHeaders, generateSigningSecret } from '@svc/contracts';
import { Webhook } from '@svc/sdk';
import { handleDelivery } from './delivery-watcher';

const at = new Date('2026-11-24T10:11:12.000Z');

/** A delivery as the platform signs it. */
function signed(secret: string, deliveryId: string, event: unknown) {
  const body = Buffer.from(JSON.stringify(event));
  const headers = Object.fromEntries(
    Object.entries(
      deliveryHeaders({ secret, deliveryId, timestamp: Math.floor(Date.now() / 1000), body }),
    ).map(([k, v]) => [k.toLowerCase(), v]),
  );
  return { headers, body };
}

const completed = {
  type: 'invocation.completed',
  data: { invocation_id: 'inv_1', state: 'completed' },
};

describe('handleDelivery', () => {
  it('when a delivery is signed with the subscription secret, then it is accepted and printed on one line', async () => {
    const secret = generateSigningSecret();
    const { headers, body } = signed(secret, 'msg_1', completed);
    const answer = await handleDelivery(new Webhook(secret), headers, body, at);
    expect(answer.status).toBe(204);
    expect(answer.line).toBe(
      `10:11:12  ${'invocation.completed'.padEnd(32)} inv_1  state=completed  (msg_1)`,
    );
  });

  it('when the same delivery id comes again, then it is accepted and marked as a repeat', async () => {
    const secret = generateSigningSecret();
    const webhook = new Webhook(secret);
    const first = signed(secret, 'msg_2', completed);
    await handleDelivery(webhook, first.headers, first.body, at);
    const again = signed(secret, 'msg_2', completed);
    const answer = await handleDelivery(webhook, again.headers, again.body, at);
    expect(answer.status).toBe(204);
    expect(answer.line).toContain('(msg_2, again)');
  });

  it('when the signature was made with another secret or the body was changed, then it is refused with 400', async () => {
    const secret = generateSigningSecret();
    const other = signed(generateSigningSecret(), 'msg_3', completed);
    expect(await handleDelivery(new Webhook(secret), other.headers, other.body, at)).toMatchObject({
      status: 400,
      line: expect.stringContaining('does not verify'),
    });
    const tampered = signed(secret, 'msg_4', completed);
    const body = Buffer.from(tampered.body.toString('utf8').replace('completed', 'cancelled'));
    expect((await handleDelivery(new Webhook(secret), tampered.headers, body, at)).status).toBe(400);
  });

  it('when the delivery headers are missing, then it is refused with 400 and the secret is not printed', async () => {
    const secret = generateSigningSecret();
    const answer = await handleDelivery(new Webhook(secret), {}, Buffer.from('{}'), at);
    expect(answer.status).toBe(400);
    expect(answer.line).not.toContain(secret);
  });
});
