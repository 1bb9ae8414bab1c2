import type { RelayApi } from '@svc/contracts';
import type { OperationHandlers } from '@svc/service-kit';
import { describeStatus } from '../use-cases/status/describe-status';
import type { StatusFacts } from '../use-cases/status/describe-status';

type StatusHandlers = Pick<OperationHandlers<RelayApi.operations>, 'relayStatus'>;

/** `GET /status`: process facts of the relay. */
export function statusRoutes(deps: {
  facts: Omit<StatusFacts, 'port' | 'now' | 'ready' | 'spawns'>;
  spawns: () => StatusFacts['spawns'];
  configuredPort: number;
  now: () => Date;
  isReady: () => Promise<boolean>;
}): StatusHandlers {
  return {
    relayStatus: async ({ req }) => ({
      status: 200,
      body: describeStatus({
        ...deps.facts,
        // The socket's local port is the port actually bound (the configured one may be 0).
        port: req.socket.localPort ?? deps.configuredPort,
        now: deps.now(),
        ready: await deps.isReady(),
        spawns: deps.spawns(),
      }),
    }),
  };
}
