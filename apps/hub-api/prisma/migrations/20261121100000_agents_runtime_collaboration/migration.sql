-- CreateEnum
CREATE TYPE "AgentStatus" AS ENUM ('online', 'idle', 'busy', 'offline', 'evicted');

-- CreateEnum
CREATE TYPE "HandoffStatus" AS ENUM ('open', 'accepted', 'claimed', 'blocked', 'completed', 'cancelled');

-- CreateTable
CREATE TABLE "runtime_hosts" (
    "id" TEXT NOT NULL,
    "workspace_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "hostname" TEXT,
    "workdir_root" TEXT NOT NULL,
    "console_public_base_url" TEXT NOT NULL,
    "relay_public_url" TEXT,
    "console_bind_host" TEXT NOT NULL DEFAULT '127.0.0.1',
    "console_listen_port" INTEGER NOT NULL DEFAULT 8790,
    "console_route_prefix" TEXT NOT NULL DEFAULT '',
    "relay_bind_host" TEXT NOT NULL DEFAULT '127.0.0.1',
    "relay_listen_port" INTEGER NOT NULL DEFAULT 8787,
    "relay_token_hash" TEXT NOT NULL,
    "relay_token_ciphertext" TEXT NOT NULL,
    "relay_token_rotated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "relay_ready" BOOLEAN NOT NULL DEFAULT false,
    "console_router_ready" BOOLEAN NOT NULL DEFAULT false,
    "runtime_version" TEXT,
    "last_heartbeat_at" TIMESTAMPTZ(3),
    "runtime_api_key_id" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "runtime_hosts_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "runtime_bundles" (
    "id" TEXT NOT NULL,
    "workspace_id" TEXT NOT NULL,
    "runtime_instance_id" TEXT,
    "version" TEXT,
    "first_seen_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "last_seen_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "runtime_bundles_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "agents" (
    "id" TEXT NOT NULL,
    "workspace_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "status" "AgentStatus" NOT NULL DEFAULT 'offline',
    "capabilities" TEXT[],
    "runtime_instance_id" TEXT,
    "workdir" TEXT,
    "project_id" TEXT,
    "serve_port" INTEGER,
    "console_route" TEXT,
    "model" TEXT,
    "last_heartbeat_at" TIMESTAMPTZ(3),
    "started_at" TIMESTAMPTZ(3),
    "stopped_at" TIMESTAMPTZ(3),
    "evicted_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "agents_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "teams" (
    "id" TEXT NOT NULL,
    "workspace_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "teams_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "team_agents" (
    "team_id" TEXT NOT NULL,
    "agent_id" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "team_agents_pkey" PRIMARY KEY ("team_id","agent_id")
);

-- CreateTable
CREATE TABLE "team_participants" (
    "team_id" TEXT NOT NULL,
    "participant_id" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "team_participants_pkey" PRIMARY KEY ("team_id","participant_id")
);

-- CreateTable
CREATE TABLE "project_teams" (
    "project_id" TEXT NOT NULL,
    "team_id" TEXT NOT NULL,
    "assigned_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "unassigned_at" TIMESTAMPTZ(3),

    CONSTRAINT "project_teams_pkey" PRIMARY KEY ("project_id","team_id")
);

-- CreateTable
CREATE TABLE "provider_models" (
    "id" TEXT NOT NULL,
    "provider" TEXT NOT NULL,
    "model" TEXT NOT NULL,
    "display_name" TEXT NOT NULL,
    "active" BOOLEAN NOT NULL DEFAULT true,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "provider_models_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "provider_credentials" (
    "id" TEXT NOT NULL,
    "workspace_id" TEXT NOT NULL,
    "provider" TEXT NOT NULL,
    "secret_ciphertext" TEXT NOT NULL,
    "last4" TEXT NOT NULL,
    "created_by_id" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "rotated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "provider_credentials_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "handoffs" (
    "id" TEXT NOT NULL,
    "workspace_id" TEXT NOT NULL,
    "project_id" TEXT,
    "title" TEXT NOT NULL,
    "description" TEXT NOT NULL DEFAULT '',
    "status" "HandoffStatus" NOT NULL DEFAULT 'open',
    "assignee_agent_id" TEXT,
    "created_by_kind" TEXT NOT NULL,
    "created_by_id" TEXT,
    "reference_kind" TEXT,
    "reference_id" TEXT,
    "reference_data" JSONB NOT NULL DEFAULT '{}',
    "blocker_reason" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "accepted_at" TIMESTAMPTZ(3),
    "claimed_at" TIMESTAMPTZ(3),
    "blocked_at" TIMESTAMPTZ(3),
    "completed_at" TIMESTAMPTZ(3),
    "cancelled_at" TIMESTAMPTZ(3),

    CONSTRAINT "handoffs_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "handoff_evidence" (
    "id" TEXT NOT NULL,
    "handoff_id" TEXT NOT NULL,
    "agent_id" TEXT,
    "kind" TEXT NOT NULL,
    "content" JSONB NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "handoff_evidence_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "repos" (
    "id" TEXT NOT NULL,
    "workspace_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "url" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "repos_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "repo_credentials" (
    "repo_id" TEXT NOT NULL,
    "kind" TEXT NOT NULL,
    "secret_ciphertext" TEXT NOT NULL,
    "fingerprint" TEXT NOT NULL,
    "set_by_id" TEXT NOT NULL,
    "set_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "rotated_at" TIMESTAMPTZ(3),

    CONSTRAINT "repo_credentials_pkey" PRIMARY KEY ("repo_id")
);

-- CreateTable
CREATE TABLE "workflow_drafts" (
    "id" TEXT NOT NULL,
    "workspace_id" TEXT NOT NULL,
    "project_id" TEXT,
    "title" TEXT NOT NULL,
    "intent" TEXT NOT NULL,
    "status" TEXT NOT NULL DEFAULT 'draft',
    "created_by_id" TEXT NOT NULL,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "workflow_drafts_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "messages" (
    "id" TEXT NOT NULL,
    "workspace_id" TEXT NOT NULL,
    "to_agent_id" TEXT NOT NULL,
    "from_kind" TEXT NOT NULL,
    "from_id" TEXT,
    "kind" TEXT NOT NULL,
    "body" TEXT NOT NULL,
    "correlation_id" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "read_at" TIMESTAMPTZ(3),

    CONSTRAINT "messages_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE UNIQUE INDEX "runtime_hosts_workspace_id_name_key" ON "runtime_hosts"("workspace_id", "name");

-- CreateIndex
CREATE INDEX "runtime_bundles_workspace_id_idx" ON "runtime_bundles"("workspace_id");

-- CreateIndex
CREATE INDEX "agents_runtime_instance_id_idx" ON "agents"("runtime_instance_id");

-- CreateIndex
CREATE UNIQUE INDEX "agents_workspace_id_name_key" ON "agents"("workspace_id", "name");

-- CreateIndex
CREATE UNIQUE INDEX "teams_workspace_id_name_key" ON "teams"("workspace_id", "name");

-- CreateIndex
CREATE INDEX "team_agents_agent_id_idx" ON "team_agents"("agent_id");

-- CreateIndex
CREATE INDEX "team_participants_participant_id_idx" ON "team_participants"("participant_id");

-- CreateIndex
CREATE INDEX "project_teams_team_id_idx" ON "project_teams"("team_id");

-- CreateIndex
CREATE UNIQUE INDEX "provider_models_provider_model_key" ON "provider_models"("provider", "model");

-- CreateIndex
CREATE UNIQUE INDEX "provider_credentials_workspace_id_provider_key" ON "provider_credentials"("workspace_id", "provider");

-- CreateIndex
CREATE INDEX "handoffs_assignee_agent_id_status_idx" ON "handoffs"("assignee_agent_id", "status");

-- CreateIndex
CREATE INDEX "handoffs_workspace_id_created_at_idx" ON "handoffs"("workspace_id", "created_at");

-- CreateIndex
CREATE INDEX "handoffs_reference_kind_reference_id_idx" ON "handoffs"("reference_kind", "reference_id");

-- CreateIndex
CREATE INDEX "handoff_evidence_handoff_id_idx" ON "handoff_evidence"("handoff_id");

-- CreateIndex
CREATE UNIQUE INDEX "repos_workspace_id_name_key" ON "repos"("workspace_id", "name");

-- CreateIndex
CREATE INDEX "workflow_drafts_workspace_id_created_at_idx" ON "workflow_drafts"("workspace_id", "created_at");

-- CreateIndex
CREATE INDEX "messages_to_agent_id_created_at_idx" ON "messages"("to_agent_id", "created_at");

-- AddForeignKey
ALTER TABLE "runtime_hosts" ADD CONSTRAINT "runtime_hosts_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "agents" ADD CONSTRAINT "agents_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "agents" ADD CONSTRAINT "agents_runtime_instance_id_fkey" FOREIGN KEY ("runtime_instance_id") REFERENCES "runtime_hosts"("id") ON DELETE RESTRICT ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "agents" ADD CONSTRAINT "agents_project_id_fkey" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE SET NULL ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "teams" ADD CONSTRAINT "teams_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "team_agents" ADD CONSTRAINT "team_agents_team_id_fkey" FOREIGN KEY ("team_id") REFERENCES "teams"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "team_agents" ADD CONSTRAINT "team_agents_agent_id_fkey" FOREIGN KEY ("agent_id") REFERENCES "agents"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "team_participants" ADD CONSTRAINT "team_participants_team_id_fkey" FOREIGN KEY ("team_id") REFERENCES "teams"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "team_participants" ADD CONSTRAINT "team_participants_participant_id_fkey" FOREIGN KEY ("participant_id") REFERENCES "participants"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "project_teams" ADD CONSTRAINT "project_teams_project_id_fkey" FOREIGN KEY ("project_id") REFERENCES "projects"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "project_teams" ADD CONSTRAINT "project_teams_team_id_fkey" FOREIGN KEY ("team_id") REFERENCES "teams"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "handoff_evidence" ADD CONSTRAINT "handoff_evidence_handoff_id_fkey" FOREIGN KEY ("handoff_id") REFERENCES "handoffs"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "repo_credentials" ADD CONSTRAINT "repo_credentials_repo_id_fkey" FOREIGN KEY ("repo_id") REFERENCES "repos"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- Provider catalog (reference data): exact identifiers; callers must use them as written.
INSERT INTO "provider_models" ("id", "provider", "model", "display_name") VALUES
    ('anthropic/claude-sonnet-4-5', 'anthropic', 'claude-sonnet-4-5', 'Claude Sonnet 4.5'),
    ('anthropic/claude-opus-4-1', 'anthropic', 'claude-opus-4-1', 'Claude Opus 4.1'),
    ('anthropic/claude-haiku-4-5', 'anthropic', 'claude-haiku-4-5', 'Claude Haiku 4.5'),
    ('openai/gpt-5', 'openai', 'gpt-5', 'GPT-5'),
    ('openai/gpt-5-mini', 'openai', 'gpt-5-mini', 'GPT-5 mini'),
    ('openai/gpt-4.1', 'openai', 'gpt-4.1', 'GPT-4.1'),
    ('google/gemini-2.5-pro', 'google', 'gemini-2.5-pro', 'Gemini 2.5 Pro'),
    ('google/gemini-2.5-flash', 'google', 'gemini-2.5-flash', 'Gemini 2.5 Flash'),
    ('local/echo', 'local', 'echo', 'Local echo model (development and tests)');
