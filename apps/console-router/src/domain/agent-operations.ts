import { consoleRouterDocument } from '@svc/contracts';
import { listOperations } from '@svc/service-kit';
import type { CallerKind } from './console-access';

/** The prefix every proxied operation of the router's document shares. */
const ROUTE_PREFIX = '/{workspace}/agents/{agentId}';
/** Paths under a route the document does not list are forwarded for every caller kind the agent accepts. */
const DEFAULT_KINDS: readonly CallerKind[] = ['participant', 'agent'];

/**
 * Which caller kinds may use a path under an agent route, read from the router's own document
 * (`x-svc-actors` of the `proxyAgent*` operations): the terminal is for participants only; health and chat
 * for participants and agents. A path the document does not list is left to the agent to answer.
 */
export function createOperationRules() {
  const rules = new Map<string, CallerKind[]>();
  for (const op of listOperations(consoleRouterDocument)) {
    if (!op.path.startsWith(`${ROUTE_PREFIX}/`)) continue;
    const kinds = op.actors.filter((a): a is CallerKind => a === 'participant' || a === 'agent');
    rules.set(`${op.method.toUpperCase()} ${op.path.slice(ROUTE_PREFIX.length)}`, kinds);
  }
  /** The caller kinds allowed for `method` on `path` (the part after the route, without the query). */
  return (method: string, path: string): readonly CallerKind[] =>
    rules.get(`${method.toUpperCase()} ${path}`) ??
    (method.toUpperCase() === 'HEAD' ? rules.get(`GET ${path}`) : undefined) ??
    DEFAULT_KINDS;
}

export type OperationRules = ReturnType<typeof createOperationRules>;
