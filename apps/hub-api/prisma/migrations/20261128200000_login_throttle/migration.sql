-- CreateTable
CREATE TABLE "login_throttle_windows" (
    "key" TEXT NOT NULL,
    "started_at" TIMESTAMPTZ(3) NOT NULL,
    "failures" INTEGER NOT NULL,

    CONSTRAINT "login_throttle_windows_pkey" PRIMARY KEY ("key")
);

-- CreateIndex
CREATE INDEX "login_throttle_windows_started_at_idx" ON "login_throttle_windows"("started_at");

-- Counts one failed sign-in attempt of a client in its windows, in one round trip: creates the windows it does
-- not have yet, locks them in key order (two attempts never deadlock), and counts the attempt in every window
-- or in none, when one is at its limit (a window that has ended starts again). Returns the windows after.
CREATE FUNCTION login_throttle_count(p_keys TEXT[], p_limits INTEGER[], p_now TIMESTAMPTZ, p_ended TIMESTAMPTZ)
RETURNS TABLE (window_key TEXT, window_started_at TIMESTAMPTZ, window_failures INTEGER, window_limit INTEGER, counted BOOLEAN)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    admitted BOOLEAN;
BEGIN
    INSERT INTO login_throttle_windows (key, started_at, failures)
        SELECT k, p_now, 0 FROM unnest(p_keys) AS k ORDER BY k
        ON CONFLICT (key) DO NOTHING;
    PERFORM 1 FROM login_throttle_windows w WHERE w.key = ANY(p_keys) ORDER BY w.key FOR UPDATE;
    SELECT bool_and(w.started_at <= p_ended OR w.failures < l.lim) INTO admitted
        FROM login_throttle_windows w JOIN unnest(p_keys, p_limits) AS l(k, lim) ON w.key = l.k;
    IF admitted THEN
        UPDATE login_throttle_windows w SET
            started_at = CASE WHEN w.started_at <= p_ended THEN p_now ELSE w.started_at END,
            failures = CASE WHEN w.started_at <= p_ended THEN 1 ELSE w.failures + 1 END
        WHERE w.key = ANY(p_keys);
    END IF;
    RETURN QUERY
        SELECT w.key, w.started_at, w.failures, l.lim, admitted
        FROM login_throttle_windows w JOIN unnest(p_keys, p_limits) AS l(k, lim) ON w.key = l.k;
END
$$;
