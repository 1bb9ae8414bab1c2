import type { NextFunction, Request, Response } from 'express';
import { safeEqual } from '@svc/auth';
import type { RelayApi } from '@svc/contracts';
import { AppError, forbidden, unauthorized } from '@svc/service-kit';
import type { OperationHandlers } from '@svc/service-kit';
import { relaySpawns } from '../metrics';
import type { AgentSpawner } from '../use-cases/spawn/spawn-agent';

type SpawnHandlers = Pick<OperationHandlers<RelayApi.operations>, 'relaySpawn'>;

/**
 * Guards `POST /spawn` before its body is read: no token configured → 503 `relay_spawn_disabled`; no header
 * → 401; a wrong token → 403 (compared in constant time). The token is never logged or echoed.
 */
export function relayTokenGuard(relayToken: string | undefined) {
  return (req: Request, _res: Response, next: NextFunction): void => {
    if (!relayToken) {
      relaySpawns.inc({ outcome: 'refused' });
      next(
        new AppError({
          status: 503,
          code: 'relay_spawn_disabled',
          detail: 'This relay has no relay token configured (SVC_RELAY_TOKEN), so it does not serve spawns.',
        }),
      );
      return;
    }
    const given = req.headers['x-svc-relay-token'];
    if (typeof given !== 'string' || given === '') {
      relaySpawns.inc({ outcome: 'refused' });
      next(unauthorized('relay_token_missing', 'The x-svc-relay-token header is required.'));
      return;
    }
    if (!safeEqual(given, relayToken)) {
      relaySpawns.inc({ outcome: 'refused' });
      next(forbidden('relay_token_invalid', "The relay token is not this host's relay token."));
      return;
    }
    next();
  };
}

/** `POST /spawn`: the hub spawn path (the token was checked by {@link relayTokenGuard}). */
export function spawnRoutes(deps: { spawner: AgentSpawner }): SpawnHandlers {
  return {
    relaySpawn: async ({ body, res }) => {
      try {
        const answer = await deps.spawner.spawn(body);
        if (answer.status === 202) res.setHeader('Retry-After', '2');
        else relaySpawns.inc({ outcome: 'started' });
        return answer;
      } catch (error) {
        if (error instanceof AppError && error.status !== 409) {
          relaySpawns.inc({ outcome: error.status === 422 ? 'refused' : 'failed' });
        }
        throw error;
      }
    },
  };
}
