import { createHubClient } from '@svc/contracts';
import type { HubApi } from '@svc/contracts';
import { AppError } from '@svc/service-kit';
import type { Session } from '../../domain/session-cookie';

type Participant = HubApi.components['schemas']['Participant'];
type Problem = { code?: unknown; detail?: unknown; status?: unknown; errors?: unknown };

export interface SignInInput {
  email: string;
  password: string;
  clientAddress: string | undefined;
}

export interface SignedIn {
  session: Session;
  participant: Participant;
}

/** Codes of the hub's sign-in answers passed on to the browser as they are (with the hub's status). */
const PASSED_ON = new Set([
  'invalid_credentials',
  'login_locked',
  'login_throttled',
  'validation_failed',
  'text_invalid',
]);

/**
 * Signs a participant in at the hub (`POST /api/v1/auth/login`); the answer's token becomes the session. The
 * hub's refusals (wrong credentials, lockout, throttling, invalid input) reach the browser with their code and
 * `Retry-After`; an unreachable hub is 502 `hub_unavailable`.
 */
export async function signIn(hubUrl: string, input: SignInInput): Promise<SignedIn> {
  const hub = createHubClient({
    baseUrl: hubUrl,
    clientName: 'control-web',
    headers: input.clientAddress ? { 'x-forwarded-for': input.clientAddress } : {},
  });
  let answer;
  try {
    answer = await hub.POST('/api/v1/auth/login', {
      body: { email: input.email, password: input.password },
      signal: AbortSignal.timeout(15_000),
    });
  } catch (error) {
    throw new AppError({
      status: 502,
      code: 'hub_unavailable',
      detail: 'The hub did not answer the sign-in.',
      message: `hub sign-in failed: ${(error as Error).message}`,
    });
  }
  if (answer.data) {
    const data = answer.data.data;
    return {
      participant: data.participant,
      session: {
        token: data.token,
        expiresAt: Date.parse(data.expires_at),
        participantId: data.participant.id,
      },
    };
  }
  const problem = (answer.error ?? {}) as Problem;
  const code = typeof problem.code === 'string' ? problem.code : '';
  if (PASSED_ON.has(code)) {
    const retryAfter = answer.response.headers.get('retry-after');
    throw new AppError({
      status: answer.response.status,
      code,
      detail: typeof problem.detail === 'string' ? problem.detail : undefined,
      extra: Array.isArray(problem.errors) ? { errors: problem.errors } : {},
      headers: retryAfter ? { 'Retry-After': retryAfter } : {},
    });
  }
  throw new AppError({
    status: 502,
    code: 'hub_unavailable',
    detail: 'The hub could not sign you in right now.',
    message: `hub sign-in answered ${answer.response.status} ${code}`,
  });
}
