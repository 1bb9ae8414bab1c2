-- Model assistance for resolve: a project's settings (off unless set) and its budget counters per UTC period.
CREATE TABLE "assistance_settings" (
    "project_id" TEXT NOT NULL,
    "workspace_id" TEXT NOT NULL,
    "enabled" BOOLEAN NOT NULL DEFAULT false,
    "allow_assisted_routing" BOOLEAN NOT NULL DEFAULT false,
    "data_may_leave_workspace" BOOLEAN NOT NULL DEFAULT false,
    "store_prompts" BOOLEAN NOT NULL DEFAULT false,
    "assist_on_tie" BOOLEAN NOT NULL DEFAULT false,
    "provider" TEXT,
    "model" TEXT,
    "base_url" TEXT,
    "timeout_ms" INTEGER NOT NULL,
    "calls_per_day" INTEGER NOT NULL,
    "tokens_per_day" BIGINT NOT NULL,
    "calls_per_month" INTEGER NOT NULL,
    "tokens_per_month" BIGINT NOT NULL,
    "warning_percent" INTEGER NOT NULL,
    "revision" INTEGER NOT NULL DEFAULT 1,
    "updated_by_kind" TEXT NOT NULL,
    "updated_by_id" TEXT,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "assistance_settings_pkey" PRIMARY KEY ("project_id")
);

-- Calls and tokens reserved in one UTC day ('day') or month ('month'), starting at period_start.
CREATE TABLE "assistance_usage" (
    "project_id" TEXT NOT NULL,
    "period" TEXT NOT NULL,
    "period_start" DATE NOT NULL,
    "calls" INTEGER NOT NULL DEFAULT 0,
    "tokens" BIGINT NOT NULL DEFAULT 0,

    CONSTRAINT "assistance_usage_pkey" PRIMARY KEY ("project_id", "period", "period_start")
);
