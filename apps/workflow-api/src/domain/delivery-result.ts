/** The answer header by which a receiver asks for no further retry of a delivery (lower case, as Node reads it). */
export const STOP_RETRIES_HEADER = 'x-svc-stop-retries';

/** What one delivery attempt came to: the sender's answer, which the attempt record and the metrics keep. */
export interface DeliveryResult {
  /** The response status, also when the body then failed or timed out; null when no response arrived. */
  status: number | null;
  latencyMs: number;
  /**
   * The first 2 KiB of the response body, decoded as UTF-8 (a character cut at the limit is dropped, NUL
   * replaced by U+FFFD).
   */
  responseSnippet: string;
  /** From `Retry-After` (seconds or HTTP-date), at most 24 h; null when absent or unreadable. */
  retryAfterMs: number | null;
  /** The answer carried `X-Svc-Stop-Retries: true` (see {@link STOP_RETRIES_HEADER}). */
  stopRetries: boolean;
  /**
   * Null when a complete response arrived (whatever its status); otherwise a stable code such as `timeout`,
   * `connection_refused`, `tls_error` or a delivery URL error code. Never contains the URL or any header.
   */
  error: string | null;
}
