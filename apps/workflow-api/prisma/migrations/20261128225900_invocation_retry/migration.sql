-- A retry is a new invocation naming the failed or cancelled one it retries.
ALTER TABLE "invocations" ADD COLUMN "retry_of" TEXT;
CREATE INDEX "invocations_retry_of_idx" ON "invocations"("retry_of");
