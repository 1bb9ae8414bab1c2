import { useEffect, useState } from 'react';
import type { FormEvent } from 'react';
import { Navigate, useNavigate, useSearchParams } from 'react-router';
import { APIError } from '@svc/sdk';
import { ProblemMessage } from '../../components/ProblemMessage';
import { useSession } from '../../app/session';

/** Where to go after signing in: a path of this app only (never another site). */
function safeNext(next: string | null): string {
  return next && next.startsWith('/') && !next.startsWith('//') && !next.startsWith('/\\') ? next : '/';
}

/** Messages for the sign-in refusals a person can act on; anything else is shown as the problem it is. */
function refusal(error: unknown): string | undefined {
  if (!(error instanceof APIError)) return undefined;
  if (error.code === 'invalid_credentials') return 'The email or password is wrong.';
  if (error.code === 'login_locked' || error.code === 'login_throttled') {
    const retry = Number(error.headers.get('retry-after'));
    const wait = Number.isFinite(retry) && retry > 0 ? ` Try again in ${Math.ceil(retry / 60)} min.` : '';
    return `Too many failed sign-ins.${wait}`;
  }
  return undefined;
}

export function SignInPage() {
  const { state, signIn } = useSession();
  const [params] = useSearchParams();
  const navigate = useNavigate();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<unknown>(undefined);
  const next = safeNext(params.get('next'));

  useEffect(() => {
    document.title = 'Sign in · Control';
  }, []);

  if (state.status === 'signed-in') return <Navigate to={next} replace />;

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setBusy(true);
    setError(undefined);
    try {
      await signIn(email, password);
      setPassword('');
      navigate(next, { replace: true });
    } catch (failure) {
      setError(failure);
    } finally {
      setBusy(false);
    }
  };
  const message = refusal(error);

  return (
    <main id="main" className="sign-in">
      <form className="sign-in-card" onSubmit={(e) => void submit(e)} aria-labelledby="sign-in-title">
        <h1 id="sign-in-title">Sign in to Control</h1>
        {params.get('expired') === '1' && !error && (
          <p className="notice" role="status">
            Your session ended. Sign in again to continue.
          </p>
        )}
        <label htmlFor="email">Email</label>
        <input
          id="email"
          name="email"
          type="email"
          autoComplete="username"
          required
          value={email}
          onChange={(e) => setEmail(e.target.value)}
        />
        <label htmlFor="password">Password</label>
        <input
          id="password"
          name="password"
          type="password"
          autoComplete="current-password"
          required
          value={password}
          onChange={(e) => setPassword(e.target.value)}
        />
        {message ? (
          <p className="problem" role="alert">
            {message}
          </p>
        ) : (
          <ProblemMessage error={error} context="Sign-in failed" />
        )}
        <button type="submit" className="button-primary" disabled={busy}>
          {busy ? 'Signing in…' : 'Sign in'}
        </button>
      </form>
    </main>
  );
}
