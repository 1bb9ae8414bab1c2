-- AlterTable
ALTER TABLE "invocations" ADD COLUMN     "approval_at" TIMESTAMPTZ(3),
ADD COLUMN     "approval_by" TEXT,
ADD COLUMN     "approval_comment" TEXT,
ADD COLUMN     "approval_decision" TEXT,
ADD COLUMN     "approval_required" BOOLEAN NOT NULL DEFAULT false,
ADD COLUMN     "attention_reason" TEXT,
ADD COLUMN     "blockers" JSONB NOT NULL DEFAULT '[]',
ADD COLUMN     "completed_at" TIMESTAMPTZ(3),
ADD COLUMN     "launched_at" TIMESTAMPTZ(3);

-- CreateTable
CREATE TABLE "workflow_runs" (
    "id" TEXT NOT NULL,
    "invocation_id" TEXT NOT NULL,
    "workspace_id" TEXT NOT NULL,
    "project_id" TEXT NOT NULL,
    "state" TEXT NOT NULL DEFAULT 'running',
    "started_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "ended_at" TIMESTAMPTZ(3),

    CONSTRAINT "workflow_runs_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "run_stages" (
    "id" TEXT NOT NULL,
    "run_id" TEXT NOT NULL,
    "invocation_id" TEXT NOT NULL,
    "workspace_id" TEXT NOT NULL,
    "position" INTEGER NOT NULL,
    "key" TEXT NOT NULL,
    "title" TEXT NOT NULL,
    "required_capabilities" JSONB NOT NULL DEFAULT '[]',
    "state" TEXT NOT NULL DEFAULT 'pending',
    "owner_agent_id" TEXT,
    "handoff_id" TEXT,
    "stalled_agent_ids" JSONB NOT NULL DEFAULT '[]',
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "blocker_reason" TEXT,
    "progress" TEXT,
    "summary" TEXT,
    "first_assigned_at" TIMESTAMPTZ(3),
    "assigned_at" TIMESTAMPTZ(3),
    "claimed_at" TIMESTAMPTZ(3),
    "last_heartbeat_at" TIMESTAMPTZ(3),
    "completed_at" TIMESTAMPTZ(3),

    CONSTRAINT "run_stages_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "stage_evidence" (
    "id" TEXT NOT NULL,
    "stage_id" TEXT NOT NULL,
    "agent_id" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "content" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "stage_evidence_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "workflow_outbox" (
    "id" TEXT NOT NULL,
    "invocation_id" TEXT NOT NULL,
    "reason" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "enqueued_at" TIMESTAMPTZ(3),
    "processed_at" TIMESTAMPTZ(3),
    "attempts" INTEGER NOT NULL DEFAULT 0,

    CONSTRAINT "workflow_outbox_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "artifacts" (
    "id" TEXT NOT NULL,
    "invocation_id" TEXT NOT NULL,
    "run_id" TEXT NOT NULL,
    "workspace_id" TEXT NOT NULL,
    "project_id" TEXT NOT NULL,
    "schema_id" TEXT NOT NULL,
    "schema_name" TEXT NOT NULL,
    "schema_version" TEXT NOT NULL,
    "version" INTEGER NOT NULL DEFAULT 1,
    "summary" TEXT NOT NULL,
    "payload" JSONB NOT NULL,
    "payload_hash" TEXT NOT NULL,
    "provenance" JSONB NOT NULL,
    "limitations" JSONB NOT NULL DEFAULT '[]',
    "created_by_kind" TEXT NOT NULL,
    "created_by_id" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "artifacts_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "artifact_rejections" (
    "id" TEXT NOT NULL,
    "invocation_id" TEXT NOT NULL,
    "schema_name" TEXT NOT NULL,
    "schema_version" TEXT NOT NULL,
    "payload" JSONB NOT NULL,
    "errors" JSONB NOT NULL,
    "created_by_kind" TEXT NOT NULL,
    "created_by_id" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "artifact_rejections_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "workflow_runs_invocation_id_key" ON "workflow_runs"("invocation_id");

-- CreateIndex
CREATE INDEX "run_stages_owner_agent_id_state_idx" ON "run_stages"("owner_agent_id", "state");

-- CreateIndex
CREATE INDEX "run_stages_state_last_heartbeat_at_idx" ON "run_stages"("state", "last_heartbeat_at");

-- CreateIndex
CREATE UNIQUE INDEX "run_stages_run_id_position_key" ON "run_stages"("run_id", "position");

-- CreateIndex
CREATE INDEX "stage_evidence_stage_id_created_at_idx" ON "stage_evidence"("stage_id", "created_at");

-- CreateIndex
CREATE INDEX "workflow_outbox_processed_at_created_at_idx" ON "workflow_outbox"("processed_at", "created_at");

-- CreateIndex
CREATE INDEX "workflow_outbox_invocation_id_idx" ON "workflow_outbox"("invocation_id");

-- CreateIndex
CREATE UNIQUE INDEX "artifacts_invocation_id_key" ON "artifacts"("invocation_id");

-- CreateIndex
CREATE INDEX "artifact_rejections_invocation_id_idx" ON "artifact_rejections"("invocation_id");

-- CreateIndex
CREATE INDEX "invocations_state_updated_at_idx" ON "invocations"("state", "updated_at");
