// The rows of bench/workflow-delivery.mjs: a subscription to the receiver and pending deliveries seeded straight
// into the workflow database, as the service writes them, and their statuses read back.
import { randomBytes } from 'node:crypto';
import { insertRows } from '../harness/data-stores.mjs';

export const EVENT = 'invocation.completed';
/** Delivery rows per INSERT when seeding. */
const INSERT_CHUNK = 1000;

/** A realistic `invocation.completed` body, as the service writes it (`deliveryBody` in events.ts). */
export function eventBody(ids = {}) {
  const id = (prefix) => `${prefix}_${randomBytes(13).toString('hex').slice(0, 26)}`;
  return JSON.stringify({
    type: EVENT,
    timestamp: new Date().toISOString(),
    data: {
      workspace_id: ids.workspaceId ?? id('ws'),
      project_id: ids.projectId ?? id('prj'),
      invocation_id: ids.invocationId ?? id('inv'),
      state: 'completed',
      attention: 'none',
      attention_reason: null,
      correlation_id: `order-${randomBytes(6).toString('hex')}`,
      artifact: {
        artifact_id: id('art'),
        schema_id: id('asch'),
        schema_name: 'weekly-report',
        schema_version: '1.0.0',
      },
    },
  });
}

/** The delivery rows by status. */
export async function deliveryStatuses(client) {
  const { rows } = await client.query('SELECT status, count(*)::int AS n FROM deliveries GROUP BY status');
  return Object.fromEntries(rows.map((row) => [row.status, row.n]));
}

/**
 * One subscription to `url` (its `secret` sealed by `sealer`) and `count` pending deliveries of it, due now;
 * resolves to the subscription's id and the deliveries' ids.
 */
export async function seedDeliveries(client, { count, url, secret, sealer, newId }) {
  const workspaceId = newId('ws');
  const projectId = newId('prj');
  const subscriptionId = newId('dsub');
  await client.query(
    `INSERT INTO delivery_subscriptions (id, workspace_id, project_id, url, events, description, secret_sealed)
     VALUES ($1, $2, $3, $4, $5, $6, $7)`,
    [
      subscriptionId,
      workspaceId,
      projectId,
      url,
      JSON.stringify([EVENT]),
      'delivery bench receiver',
      sealer.seal(secret, subscriptionId),
    ],
  );
  const ids = [];
  const seededAt = new Date();
  const columns = [
    ...['id', 'subscription_id', 'workspace_id', 'project_id', 'invocation_id', 'event', 'body'],
    ...['status', 'next_attempt_at', 'enqueued_at'],
  ];
  for (let at = 0; at < count; at += INSERT_CHUNK) {
    const rows = [];
    for (let i = at; i < Math.min(count, at + INSERT_CHUNK); i += 1) {
      const id = newId('msg');
      const invocationId = newId('inv');
      ids.push(id);
      const body = eventBody({ workspaceId, projectId, invocationId });
      rows.push([
        id,
        subscriptionId,
        workspaceId,
        projectId,
        invocationId,
        EVENT,
        body,
        'pending',
        seededAt,
        seededAt,
      ]);
    }
    await insertRows(client, 'deliveries', columns, rows);
  }
  return { subscriptionId, ids };
}
