-- AlterTable
-- The last time a request through the agent's console route succeeded, as its host's console router reports
-- it with the host's heartbeat; only ever moves forward.
ALTER TABLE "agents" ADD COLUMN     "console_last_activity_at" TIMESTAMPTZ(3);
