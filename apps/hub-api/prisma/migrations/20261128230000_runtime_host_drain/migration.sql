-- A host's drain: asked when and by whom, finished when the last of its agents stopped.
ALTER TABLE "runtime_hosts" ADD COLUMN "drain_requested_at" TIMESTAMPTZ(3);
ALTER TABLE "runtime_hosts" ADD COLUMN "drain_requested_by" TEXT;
ALTER TABLE "runtime_hosts" ADD COLUMN "drained_at" TIMESTAMPTZ(3);
