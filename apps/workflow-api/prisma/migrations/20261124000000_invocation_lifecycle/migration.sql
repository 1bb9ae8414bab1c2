-- The caller's intent exactly as sent (the normalized form stays in "request" for matching and fingerprints).
-- Rows written before this migration kept only the normalized intent: it is the best original they have.
ALTER TABLE "invocations" ADD COLUMN "intent" TEXT;
UPDATE "invocations" SET "intent" = COALESCE("request"->>'intent', '');
ALTER TABLE "invocations" ALTER COLUMN "intent" SET NOT NULL;

-- Typed end of a failed or cancelled invocation.
ALTER TABLE "invocations" ADD COLUMN "failure" JSONB,
ADD COLUMN "cancellation" JSONB;

-- Listing: newest first within a project, with its state.
CREATE INDEX "invocations_project_id_state_created_at_idx" ON "invocations"("project_id", "state", "created_at");

-- Failure reports of a stage's owners (compared with the template's stage_failure_retries).
ALTER TABLE "run_stages" ADD COLUMN "failures" INTEGER NOT NULL DEFAULT 0,
ADD COLUMN "failure_reason" TEXT;

-- When a launched invocation fails with run_deadline_exceeded (launch + the template's run_deadline_seconds).
ALTER TABLE "invocations" ADD COLUMN "deadline_at" TIMESTAMPTZ(3);
CREATE INDEX "invocations_deadline_at_idx" ON "invocations"("deadline_at");
