-- Run limits: most runs in progress at once per project and per workspace; a launched invocation over a limit
-- waits queued (queued_at) until a run ends.
ALTER TABLE "invocations" ADD COLUMN "queued_at" TIMESTAMPTZ(3);
CREATE INDEX "invocations_workspace_id_state_idx" ON "invocations"("workspace_id", "state");
CREATE INDEX "invocations_queued_at_idx" ON "invocations"("queued_at");

CREATE TABLE "run_limits" (
    "scope_id" TEXT NOT NULL,
    "scope" TEXT NOT NULL,
    "workspace_id" TEXT NOT NULL,
    "max_in_progress" INTEGER NOT NULL,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "run_limits_pkey" PRIMARY KEY ("scope_id")
);
