-- The agent the hub spawns for a stage no roster agent can own (its spawn id, key, state and host).
ALTER TABLE "run_stages" ADD COLUMN "owner_spawn" JSONB;
