import { APIError, APIConnectionError } from '@svc/sdk';
import { describePattern } from '../pages/projects/pattern-words';
import { RichText } from './RichText';

/** What to do about the problems a person can act on, by their stable code. */
const FIXES: Record<string, string> = {
  role_forbidden: 'Your role in this workspace does not allow this. Ask an owner or admin of the workspace.',
  validation_failed: 'Correct the fields named below and try again.',
  upstream_unavailable: 'The service is not answering. Try again in a moment.',
  upstream_timeout: 'The service took too long to answer. Try again in a moment.',
  hub_unavailable: 'The hub is not answering. Try again in a moment.',
  csrf_check_failed: 'Reload the page and try again.',
  unauthorized: 'Your session has ended. Sign in again.',
  token_expired: 'Your session has ended. Sign in again.',
  subscription_disabled: 'Enable the subscription on the project’s Deliveries page, then resend.',
  url_invalid: 'Enter the full address of your server, starting with https://.',
  url_scheme_not_allowed: 'Use an https:// address.',
  url_credentials_not_allowed: 'Remove the user name and password from the address.',
  url_host_not_allowed: 'Use the public address of your server.',
  url_resolves_to_forbidden_address:
    'Use the public address of your server: addresses inside private networks are refused.',
  url_unresolvable: 'Check the host name of the address: it could not be found.',
  time_range_invalid: 'Choose a start time in the past.',
};

/** A mistake in a form found before anything is sent; its message says what to change. */
export class InputError extends Error {
  override name = 'InputError';
}

/** `body/template/key` → "template key". */
function fieldWords(location: string): string {
  return location
    .replace(/^(body|query|path|header)\/?/, '')
    .split('/')
    .filter((part) => !/^\d+$/.test(part))
    .join(' ')
    .replace(/_/g, ' ')
    .trim();
}

/** A field message without regular expressions: `must match pattern "^…$"` said in words. */
function messageWords(message: string): string {
  return message.replace(
    /must match pattern "(.*)"/,
    (_all, pattern: string) => `must ${describePattern(pattern)}`,
  );
}

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
  if (error instanceof InputError) return { title: error.message };
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
      {problem.detail && (
        <p>
          <RichText text={messageWords(problem.detail)} />
        </p>
      )}
      {fields.length > 0 && (
        <ul>
          {fields.map((field, index) => (
            <li key={index} title={field.location}>
              {fieldWords(field.location) ? `${fieldWords(field.location)} ` : ''}
              <RichText text={messageWords(field.message)} />
            </li>
          ))}
        </ul>
      )}
      {problem.code && FIXES[problem.code] && <p className="problem-fix">{FIXES[problem.code]}</p>}
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
