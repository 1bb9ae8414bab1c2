-- Projects can be archived: hidden from lists by default, and the Workflow API refuses new invocations.
ALTER TABLE "projects" ADD COLUMN "archived_at" TIMESTAMPTZ(3);
