-- Runtime key rotation with an overlap window, and readiness that names its causes.
ALTER TABLE "runtime_hosts" ADD COLUMN "relay_detail" TEXT;
ALTER TABLE "runtime_hosts" ADD COLUMN "console_router_detail" TEXT;
ALTER TABLE "runtime_hosts" ADD COLUMN "runtime_key_rotated_at" TIMESTAMPTZ(3);
ALTER TABLE "runtime_hosts" ADD COLUMN "runtime_key_rotated_by" TEXT;
ALTER TABLE "runtime_hosts" ADD COLUMN "previous_runtime_api_key_id" TEXT;
ALTER TABLE "runtime_hosts" ADD COLUMN "previous_runtime_key_valid_until" TIMESTAMPTZ(3);
ALTER TABLE "runtime_hosts" ADD COLUMN "heartbeat_api_key_id" TEXT;
ALTER TABLE "runtime_hosts" ADD COLUMN "heartbeat_key_revoked_at" TIMESTAMPTZ(3);
