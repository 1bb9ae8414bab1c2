import { projectOf } from '../auth/access-guard';
import type { WorkflowDeps } from '../deps';
import { presentDelivery, presentDeliveryDetail, presentSubscription } from '../presenters/delivery';
import { createDeliverySubscription } from '../use-cases/delivery/create-delivery-subscription';
import { deleteDeliverySubscription } from '../use-cases/delivery/delete-delivery-subscription';
import { getDelivery } from '../use-cases/delivery/get-delivery';
import { getDeliverySubscription } from '../use-cases/delivery/get-delivery-subscription';
import { listDeliveries } from '../use-cases/delivery/list-deliveries';
import { listDeliverySubscriptions } from '../use-cases/delivery/list-delivery-subscriptions';
import { redeliverDelivery } from '../use-cases/delivery/redeliver-delivery';
import { replayDeliveries } from '../use-cases/delivery/replay-deliveries';
import { rotateDeliverySubscriptionSecret } from '../use-cases/delivery/rotate-delivery-subscription-secret';
import { testDeliverySubscription } from '../use-cases/delivery/test-delivery-subscription';
import { updateDeliverySubscription } from '../use-cases/delivery/update-delivery-subscription';
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
  | 'testDeliverySubscription'
  | 'listDeliveries'
  | 'replayDeliveries'
  | 'getDelivery'
  | 'redeliverDelivery'
> {
  return {
    async listDeliverySubscriptions(ctx) {
      const rows = await listDeliverySubscriptions(deps, projectOf(ctx).id);
      const now = deps.now();
      return { status: 200, body: { data: rows.map((row) => presentSubscription(row, now)) } };
    },
    async createDeliverySubscription(ctx) {
      const { subscription, signingSecret } = await createDeliverySubscription(
        deps,
        actorOf(ctx.actor),
        projectOf(ctx),
        ctx.body,
        ctx.requestId,
      );
      const data = { ...presentSubscription(subscription, deps.now()), signing_secret: signingSecret };
      return { status: 201, body: { data } };
    },
    async getDeliverySubscription(ctx) {
      const subscription = await getDeliverySubscription(deps, projectOf(ctx).id, ctx.params.subscriptionId);
      return { status: 200, body: { data: presentSubscription(subscription, deps.now()) } };
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
      return { status: 200, body: { data: presentSubscription(subscription, deps.now()) } };
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
      const data = { ...presentSubscription(subscription, deps.now()), signing_secret: signingSecret };
      return { status: 200, body: { data } };
    },
    async testDeliverySubscription(ctx) {
      const data = await testDeliverySubscription(
        deps,
        actorOf(ctx.actor),
        projectOf(ctx),
        ctx.params.subscriptionId,
        ctx.requestId,
      );
      return { status: 200, body: { data } };
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
      return {
        status: 200,
        body: { data: page.items.map(presentDelivery), next_cursor: page.nextCursor },
      };
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
      const { delivery, attempts } = await getDelivery(deps, projectOf(ctx).id, ctx.params.deliveryId);
      return { status: 200, body: { data: presentDeliveryDetail(delivery, attempts) } };
    },
    async redeliverDelivery(ctx) {
      const delivery = await redeliverDelivery(
        deps,
        actorOf(ctx.actor),
        projectOf(ctx),
        ctx.params.deliveryId,
        ctx.requestId,
      );
      return { status: 202, body: { data: presentDelivery(delivery) } };
    },
  };
}
