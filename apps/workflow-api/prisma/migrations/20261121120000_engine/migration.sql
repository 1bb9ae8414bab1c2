-- CreateTable
CREATE TABLE "workflow_contracts" (
    "id" TEXT NOT NULL,
    "workspace_id" TEXT NOT NULL,
    "project_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "priority" INTEGER NOT NULL DEFAULT 0,
    "classifier" JSONB NOT NULL,
    "is_fallback" BOOLEAN NOT NULL DEFAULT false,
    "template_key" TEXT NOT NULL,
    "template_version" TEXT NOT NULL,
    "is_active" BOOLEAN NOT NULL DEFAULT true,
    "revision" INTEGER NOT NULL DEFAULT 1,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "workflow_contracts_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "workflow_templates" (
    "id" TEXT NOT NULL,
    "project_id" TEXT NOT NULL,
    "key" TEXT NOT NULL,
    "version" TEXT NOT NULL,
    "definition" JSONB NOT NULL,
    "first_used_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "workflow_templates_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "artifact_schemas" (
    "id" TEXT NOT NULL,
    "workspace_id" TEXT NOT NULL,
    "project_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "version" TEXT NOT NULL,
    "json_schema" JSONB NOT NULL,
    "schema_hash" TEXT NOT NULL,
    "deprecated_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "artifact_schemas_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "invocations" (
    "id" TEXT NOT NULL,
    "workspace_id" TEXT NOT NULL,
    "project_id" TEXT NOT NULL,
    "idempotency_key" TEXT NOT NULL,
    "fingerprint" TEXT NOT NULL,
    "correlation_id" TEXT,
    "request" JSONB NOT NULL,
    "contract_id" TEXT,
    "template_key" TEXT,
    "template_version" TEXT,
    "route" JSONB NOT NULL DEFAULT '{}',
    "state" TEXT NOT NULL DEFAULT 'received',
    "attention" TEXT NOT NULL DEFAULT 'none',
    "created_by_kind" TEXT NOT NULL,
    "created_by_id" TEXT,
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "key_expires_at" TIMESTAMPTZ(3) NOT NULL,

    CONSTRAINT "invocations_pkey" PRIMARY KEY ("id")
);

-- CreateIndex
CREATE INDEX "workflow_contracts_project_id_is_active_idx" ON "workflow_contracts"("project_id", "is_active");

-- CreateIndex
CREATE UNIQUE INDEX "workflow_templates_project_id_key_version_key" ON "workflow_templates"("project_id", "key", "version");

-- CreateIndex
CREATE UNIQUE INDEX "artifact_schemas_project_id_name_version_key" ON "artifact_schemas"("project_id", "name", "version");

-- CreateIndex
CREATE INDEX "artifact_schemas_workspace_id_idx" ON "artifact_schemas"("workspace_id");

-- CreateIndex
CREATE UNIQUE INDEX "invocations_project_id_idempotency_key_key" ON "invocations"("project_id", "idempotency_key");

-- CreateIndex
CREATE INDEX "invocations_project_id_created_at_idx" ON "invocations"("project_id", "created_at");
