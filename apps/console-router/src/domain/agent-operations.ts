import { consoleRouterDocument } from '@svc/contracts';
import { listOperations } from '@svc/service-kit/http';
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
  /** Caller kinds by method, then by path: two look-ups per request, no string built. */
  const rules = new Map<string, Map<string, CallerKind[]>>();
  for (const op of listOperations(consoleRouterDocument)) {
    if (!op.path.startsWith(`${ROUTE_PREFIX}/`)) continue;
    const kinds = op.actors.filter((a): a is CallerKind => a === 'participant' || a === 'agent');
    const method = op.method.toUpperCase();
    let byPath = rules.get(method);
    if (!byPath) rules.set(method, (byPath = new Map()));
    byPath.set(op.path.slice(ROUTE_PREFIX.length), kinds);
  }
  const lookUp = (method: string, path: string) =>
    rules.get(method)?.get(path) ??
    (method === 'HEAD' ? rules.get('GET')?.get(path) : undefined) ??
    DEFAULT_KINDS;
  /** The caller kinds allowed for `method` on `path` (the part after the route, without the query). */
  return (method: string, path: string): readonly CallerKind[] =>
    // Node hands methods over in upper case; anything else is folded first.
    lookUp(rules.has(method) ? method : method.toUpperCase(), path);
}

export type OperationRules = ReturnType<typeof createOperationRules>;
