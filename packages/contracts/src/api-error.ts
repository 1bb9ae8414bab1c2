import type { components } from './generated/hub';

export type Problem = components['schemas']['Problem'];

/** A non-success answer from any platform API, carrying its problem+json body. */
export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly problem: Problem | undefined;
  readonly requestId: string | undefined;

  constructor(status: number, problem: Problem | undefined, fallbackMessage?: string) {
    const code = problem?.code ?? `http_${status}`;
    super(problem?.detail ?? problem?.title ?? fallbackMessage ?? `request failed with HTTP ${status}`);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
    this.problem = problem;
    this.requestId = problem?.request_id;
  }
}

function isProblem(value: unknown): value is Problem {
  return (
    typeof value === 'object' && value !== null && typeof (value as { code?: unknown }).code === 'string'
  );
}

/**
 * Turns an openapi-fetch result into its `data` payload, or throws {@link ApiError}.
 * Every non-success status is a failure, as the spec requires of clients.
 */
export function unwrap<T>(result: { data?: { data: T }; error?: unknown; response: Response }): T {
  if (result.response.ok && result.data !== undefined) return result.data.data;
  const problem = isProblem(result.error) ? result.error : undefined;
  throw new ApiError(result.response.status, problem, result.response.statusText);
}
