-- When each agent the stage was taken from (a stall, a lost host, a failure) was taken from it: an agent that
-- heartbeats at the hub after that time may be given the stage again.
ALTER TABLE "run_stages" ADD COLUMN "stalled_at" JSONB NOT NULL DEFAULT '{}';
