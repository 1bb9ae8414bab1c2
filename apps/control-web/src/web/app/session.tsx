import { createContext, useCallback, useContext, useEffect, useMemo, useState } from 'react';
import type { ReactNode } from 'react';
import type { HubMe } from '@svc/sdk';
import { AuthenticationError } from '@svc/sdk';
import { callServer, createClients, SIGNED_OUT_EVENT } from './api';
import type { Clients } from './api';

export type SessionState =
  | { status: 'loading' }
  | { status: 'signed-out'; reason?: 'expired' | 'signed-out' }
  | { status: 'signed-in'; me: HubMe }
  | { status: 'error'; error: unknown };

export interface SessionContextValue {
  state: SessionState;
  clients: Clients;
  /** Signs in through the server (`POST /session`); rejects with the APIError of a refusal. */
  signIn(email: string, password: string): Promise<void>;
  signOut(): Promise<void>;
  /** Loads `/api/v1/me` again (after a membership changes). */
  refresh(): Promise<void>;
}

const SessionContext = createContext<SessionContextValue | undefined>(undefined);

/**
 * The signed-in participant and their memberships (`GET /hub/api/v1/me`), for the whole app. Any API answer
 * of 401 (the session expired or was revoked) turns the state to signed-out, which shows the sign-in page.
 */
export function SessionProvider({ children }: { children: ReactNode }) {
  const clients = useMemo(() => createClients(), []);
  const [state, setState] = useState<SessionState>({ status: 'loading' });

  const refresh = useCallback(async () => {
    try {
      const session = await callServer<{ participant_id: string } | null>('GET', '/session');
      if (!session) {
        setState({ status: 'signed-out' });
        return;
      }
      const me = await clients.hub.me();
      setState({ status: 'signed-in', me });
    } catch (error) {
      if (error instanceof AuthenticationError) setState({ status: 'signed-out' });
      else setState({ status: 'error', error });
    }
  }, [clients]);

  useEffect(() => {
    void refresh();
    const onSignedOut = () =>
      setState((s) => (s.status === 'signed-in' ? { status: 'signed-out', reason: 'expired' } : s));
    window.addEventListener(SIGNED_OUT_EVENT, onSignedOut);
    return () => window.removeEventListener(SIGNED_OUT_EVENT, onSignedOut);
  }, [refresh]);

  const signIn = useCallback(
    async (email: string, password: string) => {
      await callServer('POST', '/session', { email, password });
      await refresh();
    },
    [refresh],
  );
  const signOut = useCallback(async () => {
    await callServer('DELETE', '/session');
    setState({ status: 'signed-out', reason: 'signed-out' });
  }, []);

  const value = useMemo(
    () => ({ state, clients, signIn, signOut, refresh }),
    [state, clients, signIn, signOut, refresh],
  );
  return <SessionContext.Provider value={value}>{children}</SessionContext.Provider>;
}

export function useSession(): SessionContextValue {
  const value = useContext(SessionContext);
  if (!value) throw new Error('useSession must be used inside SessionProvider');
  return value;
}

/** The typed SDK clients (`hub`, `workflow`) bound to this origin. */
export function useClients(): Clients {
  return useSession().clients;
}
