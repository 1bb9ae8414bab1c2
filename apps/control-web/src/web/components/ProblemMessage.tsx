import { APIError, APIConnectionError } from '@svc/sdk';

/** What a failure means for a person, with the code and request id support asks for. */
function describe(error: unknown): { title: string; detail?: string; code?: string; requestId?: string } {
  if (error instanceof APIError) {
    const title = error.problem?.title ?? `Request failed (${error.status})`;
    const detail = error.problem?.detail;
    return {
      title,
      ...(detail ? { detail } : {}),
      code: error.code,
      ...(error.request_id ? { requestId: error.request_id } : {}),
    };
  }
  if (error instanceof APIConnectionError)
    return { title: 'The server cannot be reached', detail: error.message };
  return { title: 'Something went wrong', detail: error instanceof Error ? error.message : String(error) };
}

/**
 * A failed request, shown in place: the problem's title and detail, each field error, its stable code and
 * request id. Announced to screen readers (`role="alert"`).
 */
export function ProblemMessage({ error, context }: { error: unknown; context?: string }) {
  if (error === undefined || error === null) return null;
  const problem = describe(error);
  const fields = error instanceof APIError ? error.details : [];
  return (
    <div className="problem" role="alert">
      <p className="problem-title">
        {context ? `${context}: ` : ''}
        {problem.title}
      </p>
      {problem.detail && <p>{problem.detail}</p>}
      {fields.length > 0 && (
        <ul>
          {fields.map((field, index) => (
            <li key={index}>
              <code>{field.location}</code> {field.message}
            </li>
          ))}
        </ul>
      )}
      {(problem.code || problem.requestId) && (
        <p className="problem-meta">
          {problem.code && (
            <>
              Code <code>{problem.code}</code>
            </>
          )}
          {problem.requestId && (
            <>
              {' '}
              · request <code>{problem.requestId}</code>
            </>
          )}
        </p>
      )}
    </div>
  );
}
