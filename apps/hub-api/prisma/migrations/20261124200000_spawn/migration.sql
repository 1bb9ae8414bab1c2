-- CreateEnum
CREATE TYPE "AgentSpawnState" AS ENUM ('requested', 'in_progress', 'started', 'failed');

-- CreateTable
CREATE TABLE "spawn_policies" (
    "id" TEXT NOT NULL,
    "workspace_id" TEXT NOT NULL,
    "project_id" TEXT,
    "enabled" BOOLEAN NOT NULL DEFAULT false,
    "allowed_models" TEXT[],
    "allowed_capabilities" TEXT[],
    "allowed_command_keys" TEXT[],
    "max_running_agents_per_host" INTEGER NOT NULL,
    "updated_by_id" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "spawn_policies_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "agent_spawns" (
    "id" TEXT NOT NULL,
    "workspace_id" TEXT NOT NULL,
    "project_id" TEXT NOT NULL,
    "runtime_instance_id" TEXT NOT NULL,
    "state" "AgentSpawnState" NOT NULL DEFAULT 'requested',
    "origin" TEXT NOT NULL,
    "idempotency_key" TEXT,
    "request_fingerprint" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "model" TEXT NOT NULL,
    "capabilities" TEXT[],
    "command_key" TEXT NOT NULL,
    "serve" BOOLEAN NOT NULL DEFAULT false,
    "relay_request" JSONB NOT NULL,
    "agent_id" TEXT,
    "pid" INTEGER,
    "serve_port" INTEGER,
    "error_code" TEXT,
    "error_detail" TEXT,
    "error_rule" INTEGER,
    "error_cli_code" TEXT,
    "error_status" INTEGER,
    "attempts" INTEGER NOT NULL DEFAULT 0,
    "requested_by" JSONB NOT NULL,
    "authorization" JSONB NOT NULL,
    "reason" JSONB,
    "lease_owner" TEXT,
    "lease_until" TIMESTAMPTZ(3),
    "deadline_at" TIMESTAMPTZ(3) NOT NULL,
    "next_attempt_at" TIMESTAMPTZ(3),
    "started_at" TIMESTAMPTZ(3),
    "finished_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "agent_spawns_pkey" PRIMARY KEY ("id")
);

-- CreateIndex: one workspace policy (project_id null) and one override per project.
CREATE UNIQUE INDEX "spawn_policies_workspace_id_project_id_key" ON "spawn_policies"("workspace_id", "project_id") NULLS NOT DISTINCT;

-- CreateIndex
CREATE INDEX "spawn_policies_project_id_idx" ON "spawn_policies"("project_id");

-- CreateIndex
CREATE UNIQUE INDEX "agent_spawns_workspace_id_origin_idempotency_key_key" ON "agent_spawns"("workspace_id", "origin", "idempotency_key");

-- CreateIndex
CREATE INDEX "agent_spawns_workspace_id_created_at_idx" ON "agent_spawns"("workspace_id", "created_at");

-- CreateIndex
CREATE INDEX "agent_spawns_state_idx" ON "agent_spawns"("state");

-- CreateIndex
CREATE INDEX "agent_spawns_runtime_instance_id_state_idx" ON "agent_spawns"("runtime_instance_id", "state");

-- AddForeignKey
ALTER TABLE "spawn_policies" ADD CONSTRAINT "spawn_policies_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "spawn_policies" ADD CONSTRAINT "spawn_policies_project_id_fkey" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "agent_spawns" ADD CONSTRAINT "agent_spawns_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "agent_spawns" ADD CONSTRAINT "agent_spawns_project_id_fkey" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE CASCADE;
