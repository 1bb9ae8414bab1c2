-- Delivery controls: a per-subscription rate limit and ordered (first in, first out) delivery, the receiver's
-- stop-retries answer, why a delivery failed, and operational events (one per cause and subscription).
ALTER TABLE "delivery_subscriptions" ADD COLUMN "rate_limit_per_second" INTEGER;
ALTER TABLE "delivery_subscriptions" ADD COLUMN "ordered" BOOLEAN NOT NULL DEFAULT false;

ALTER TABLE "deliveries" ADD COLUMN "seq" BIGSERIAL NOT NULL;
ALTER TABLE "deliveries" ADD COLUMN "subject_id" TEXT NOT NULL DEFAULT '';
ALTER TABLE "deliveries" ADD COLUMN "failure_reason" TEXT;

ALTER TABLE "delivery_attempts" ADD COLUMN "retries_stopped" BOOLEAN NOT NULL DEFAULT false;

DROP INDEX "deliveries_subscription_id_invocation_id_event_key";
CREATE UNIQUE INDEX "deliveries_subscription_id_invocation_id_event_subject_id_key" ON "deliveries"("subscription_id", "invocation_id", "event", "subject_id");
CREATE INDEX "deliveries_subscription_id_status_seq_idx" ON "deliveries"("subscription_id", "status", "seq");
