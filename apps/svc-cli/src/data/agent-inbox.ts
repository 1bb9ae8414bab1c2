import { unwrap } from '@svc/contracts';
import type { HubApi, HubClient } from '@svc/contracts';

export type PeerMessage = HubApi.components['schemas']['PeerMessage'];

const PAGE = 200;

/** Who reads an inbox: an operator (participant or runtime key) reads any agent's, an agent its own. */
export type InboxReader =
  { kind: 'operator'; hub: HubClient; agentId: string } | { kind: 'agent'; hub: HubClient };

/** One page of an inbox, oldest first, after message `after`. Reading does not mark anything read. */
export async function readInboxPage(
  reader: InboxReader,
  options: { after?: string | undefined; unreadOnly?: boolean; limit?: number } = {},
): Promise<PeerMessage[]> {
  const query = {
    limit: options.limit ?? PAGE,
    ...(options.after ? { after: options.after } : {}),
    ...(options.unreadOnly ? { unread_only: true } : {}),
  };
  if (reader.kind === 'operator') {
    return unwrap(
      await reader.hub.GET('/api/v1/agents/{agentId}/inbox', {
        params: { path: { agentId: reader.agentId }, query },
      }),
    );
  }
  return unwrap(await reader.hub.GET('/api/v1/agents/me/inbox', { params: { query } }));
}

/** Every message after `after` (all pages), oldest first. */
export async function readInboxFrom(
  reader: InboxReader,
  after: string | undefined,
  unreadOnly = false,
): Promise<PeerMessage[]> {
  const out: PeerMessage[] = [];
  let cursor = after;
  for (;;) {
    const page = await readInboxPage(reader, { after: cursor, unreadOnly });
    out.push(...page);
    if (page.length < PAGE) return out;
    cursor = page[page.length - 1]!.id;
  }
}

/** The id of the newest message in the inbox now (undefined when it is empty). */
export async function lastInboxId(reader: InboxReader): Promise<string | undefined> {
  const all = await readInboxFrom(reader, undefined);
  return all.length > 0 ? all[all.length - 1]!.id : undefined;
}
