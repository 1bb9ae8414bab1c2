import type { HubDeps } from '../deps';
import { draftHandlers } from './drafts.routes';
import { handoffHandlers } from './handoffs.routes';
import { messageHandlers } from './messages.routes';
import { repoHandlers } from './repos.routes';

/** Every public collaboration operation: handoffs, repos, workflow drafts and messages. */
export function collaborationHandlers(deps: HubDeps) {
  return {
    ...handoffHandlers(deps),
    ...repoHandlers(deps),
    ...draftHandlers(deps),
    ...messageHandlers(deps),
  };
}
