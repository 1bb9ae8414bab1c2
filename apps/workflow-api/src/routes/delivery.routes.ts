import { projectOf } from '../auth/access-guard';
import type { WorkflowDeps } from '../deps';
import {
  createDeliverySubscription,
  deleteDeliverySubscription,
  getDelivery,
  getDeliverySubscription,
  listDeliveries,
  listDeliverySubscriptions,
  redeliverDelivery,
  replayDeliveries,
  rotateDeliverySubscriptionSecret,
  updateDeliverySubscription,
} from '../delivery/subscriptions';
import type { WorkflowHandlers } from './types';
import { actorOf } from './types';

export function deliveryHandlers(
  deps: WorkflowDeps,
): WorkflowHandlers<
  | 'listDeliverySubscriptions'
  | 'createDeliverySubscription'
  | 'getDeliverySubscription'
  | 'updateDeliverySubscription'
  | 'deleteDeliverySubscription'
  | 'rotateDeliverySubscriptionSecret'
  | 'listDeliveries'
  | 'replayDeliveries'
  | 'getDelivery'
  | 'redeliverDelivery'
> {
  return {
    async listDeliverySubscriptions(ctx) {
      return { status: 200, body: { data: await listDeliverySubscriptions(deps, projectOf(ctx).id) } };
    },
    async createDeliverySubscription(ctx) {
      const { subscription, signingSecret } = await createDeliverySubscription(
        deps,
        actorOf(ctx.actor),
        projectOf(ctx),
        ctx.body,
        ctx.requestId,
      );
      return { status: 201, body: { data: { ...subscription, signing_secret: signingSecret } } };
    },
    async getDeliverySubscription(ctx) {
      const subscription = await getDeliverySubscription(deps, projectOf(ctx).id, ctx.params.subscriptionId);
      return { status: 200, body: { data: subscription } };
    },
    async updateDeliverySubscription(ctx) {
      const subscription = await updateDeliverySubscription(
        deps,
        actorOf(ctx.actor),
        projectOf(ctx),
        ctx.params.subscriptionId,
        ctx.body,
        ctx.requestId,
      );
      return { status: 200, body: { data: subscription } };
    },
    async deleteDeliverySubscription(ctx) {
      await deleteDeliverySubscription(
        deps,
        actorOf(ctx.actor),
        projectOf(ctx),
        ctx.params.subscriptionId,
        ctx.requestId,
      );
      return { status: 204 };
    },
    async rotateDeliverySubscriptionSecret(ctx) {
      const { subscription, signingSecret } = await rotateDeliverySubscriptionSecret(
        deps,
        actorOf(ctx.actor),
        projectOf(ctx),
        ctx.params.subscriptionId,
        ctx.body?.grace_seconds,
        ctx.requestId,
      );
      return { status: 200, body: { data: { ...subscription, signing_secret: signingSecret } } };
    },
    async listDeliveries(ctx) {
      const page = await listDeliveries(deps, projectOf(ctx).id, {
        status: ctx.query.status,
        event: ctx.query.event,
        subscriptionId: ctx.query.subscription_id,
        invocationId: ctx.query.invocation_id,
        since: ctx.query.since,
        until: ctx.query.until,
        limit: ctx.query.limit,
        cursor: ctx.query.cursor,
      });
      return { status: 200, body: page };
    },
    async replayDeliveries(ctx) {
      const replayed = await replayDeliveries(
        deps,
        actorOf(ctx.actor),
        projectOf(ctx),
        ctx.body,
        ctx.requestId,
      );
      return { status: 202, body: { data: { replayed } } };
    },
    async getDelivery(ctx) {
      return {
        status: 200,
        body: { data: await getDelivery(deps, projectOf(ctx).id, ctx.params.deliveryId) },
      };
    },
    async redeliverDelivery(ctx) {
      const delivery = await redeliverDelivery(
        deps,
        actorOf(ctx.actor),
        projectOf(ctx),
        ctx.params.deliveryId,
        ctx.requestId,
      );
      return { status: 202, body: { data: delivery } };
    },
  };
}
