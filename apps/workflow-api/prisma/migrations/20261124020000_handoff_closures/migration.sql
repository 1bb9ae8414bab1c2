-- Stage handoffs the engine must cancel at the hub, retried by the sweeper until the hub confirms.
CREATE TABLE "handoff_closures" (
    "handoff_id" TEXT NOT NULL,
    "invocation_id" TEXT NOT NULL,
    "stage_id" TEXT NOT NULL,
    "reason" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "closed_at" TIMESTAMPTZ(3),
    "outcome" TEXT,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "next_attempt_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "handoff_closures_pkey" PRIMARY KEY ("handoff_id")
);

CREATE INDEX "handoff_closures_closed_at_next_attempt_at_idx" ON "handoff_closures"("closed_at", "next_attempt_at");
CREATE INDEX "handoff_closures_invocation_id_idx" ON "handoff_closures"("invocation_id");
