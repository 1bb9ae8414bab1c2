-- Hosts that die: agents whose host (or own heartbeat) went silent are marked `lost`, distinct from a clean stop.
ALTER TYPE "AgentStatus" ADD VALUE IF NOT EXISTS 'lost';
ALTER TABLE "agents" ADD COLUMN "lost_at" TIMESTAMPTZ(3);
ALTER TABLE "runtime_hosts" ADD COLUMN "lost_at" TIMESTAMPTZ(3);
-- Placement and back-pressure: per-host limits on spawns in progress and on running agents (null: no own limit).
ALTER TABLE "runtime_hosts" ADD COLUMN "max_concurrent_spawns" INTEGER;
ALTER TABLE "runtime_hosts" ADD COLUMN "max_agents" INTEGER;
