-- CreateTable
CREATE TABLE "login_throttle_windows" (
    "key" TEXT NOT NULL,
    "started_at" TIMESTAMPTZ(3) NOT NULL,
    "failures" INTEGER NOT NULL,

    CONSTRAINT "login_throttle_windows_pkey" PRIMARY KEY ("key")
);

-- CreateIndex
CREATE INDEX "login_throttle_windows_started_at_idx" ON "login_throttle_windows"("started_at");
