import type { HubDeps } from '../deps';
import { presentMe, presentParticipant } from '../presenters/workspaces';
import { getMe } from '../use-cases/auth/get-me';
import { login } from '../use-cases/auth/login';
import type { HubHandlers } from './types';
import { participantOf } from './types';

export function authHandlers(deps: HubDeps): HubHandlers<'login' | 'getMe'> {
  return {
    async login({ body, requestId, req }) {
      const session = await login(deps, {
        email: body.email,
        password: body.password,
        requestId,
        client: req.ip,
      });
      return {
        status: 200,
        body: {
          data: {
            token: session.token,
            token_type: 'Bearer',
            expires_at: session.expiresAt.toISOString(),
            participant: presentParticipant(session.participant),
          },
        },
        headers: { 'Cache-Control': 'no-store' },
      };
    },
    async getMe({ actor }) {
      const me = await getMe(deps, participantOf(actor).participantId);
      return { status: 200, body: { data: presentMe(me) } };
    },
  };
}
