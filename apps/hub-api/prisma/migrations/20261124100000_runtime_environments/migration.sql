-- CreateEnum
CREATE TYPE "TunnelProvider" AS ENUM ('cloudflare', 'local', 'external');

-- CreateEnum
CREATE TYPE "TunnelState" AS ENUM ('none', 'provisioning', 'active', 'deleting', 'failed');

-- CreateTable
CREATE TABLE "runtime_environments" (
    "id" TEXT NOT NULL,
    "workspace_id" TEXT NOT NULL,
    "name" TEXT NOT NULL,
    "tunnel_provider" "TunnelProvider",
    "tunnel_state" "TunnelState" NOT NULL DEFAULT 'none',
    "tunnel_id" TEXT,
    "tunnel_name" TEXT,
    "console_hostname" TEXT,
    "relay_hostname" TEXT,
    "console_public_base_url" TEXT,
    "relay_public_base_url" TEXT,
    "connector_token_ciphertext" TEXT,
    "dns_records" JSONB NOT NULL DEFAULT '[]',
    "ingress" JSONB,
    "last_error" JSONB,
    "operation_started_at" TIMESTAMPTZ(3),
    "backfilled_from_host_id" TEXT,
    "provisioned_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,
    "updated_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "runtime_environments_pkey" PRIMARY KEY ("id")
);

-- CreateTable
CREATE TABLE "runtime_environment_hosts" (
    "runtime_instance_id" TEXT NOT NULL,
    "environment_id" TEXT NOT NULL,
    "connector_ready" BOOLEAN,
    "connector_checked_at" TIMESTAMPTZ(3),
    "created_at" TIMESTAMPTZ(3) NOT NULL DEFAULT CURRENT_TIMESTAMP,

    CONSTRAINT "runtime_environment_hosts_pkey" PRIMARY KEY ("runtime_instance_id")
);

-- CreateIndex
CREATE UNIQUE INDEX "runtime_environments_backfilled_from_host_id_key" ON "runtime_environments"("backfilled_from_host_id");

-- CreateIndex
CREATE UNIQUE INDEX "runtime_environments_workspace_id_name_key" ON "runtime_environments"("workspace_id", "name");

-- CreateIndex
CREATE INDEX "runtime_environment_hosts_environment_id_idx" ON "runtime_environment_hosts"("environment_id");

-- AddForeignKey
ALTER TABLE "runtime_environments" ADD CONSTRAINT "runtime_environments_workspace_id_fkey" FOREIGN KEY ("workspace_id") REFERENCES "workspaces"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "runtime_environment_hosts" ADD CONSTRAINT "runtime_environment_hosts_runtime_instance_id_fkey" FOREIGN KEY ("runtime_instance_id") REFERENCES "runtime_hosts"("id") ON DELETE CASCADE ON UPDATE CASCADE;

-- AddForeignKey
ALTER TABLE "runtime_environment_hosts" ADD CONSTRAINT "runtime_environment_hosts_environment_id_fkey" FOREIGN KEY ("environment_id") REFERENCES "runtime_environments"("id") ON DELETE CASCADE ON UPDATE CASCADE;
