import type { Logger } from 'pino';
import type { Redis } from 'ioredis';

/**
 * What the hub announces when a credential or a membership stops meaning what caches remember (decision 47):
 * services drop the cached entry at once instead of waiting for its time to run out. A lost notice costs
 * nothing but time: every cache keeps its own limit (introspection 30 s, memberships 10 s, an agent's standing
 * 30 s) as the fallback.
 */
export type CredentialNotice =
  | { kind: 'api_key_revoked'; key_id: string; workspace_id: string }
  | { kind: 'member_changed'; workspace_id: string; participant_id: string }
  /**
   * An agent was evicted or deleted: every token issued to it is refused from now on. `tokens_expire_by` is
   * the latest expiry any of its tokens can have (ISO 8601), so a deny entry need not outlive it.
   */
  | { kind: 'agent_revoked'; agent_id: string; workspace_id: string; tokens_expire_by: string }
  /** A project was archived or brought back: a cached project record (archived mark included) goes at once. */
  | { kind: 'project_changed'; project_id: string; workspace_id: string }
  /**
   * What a roster of some project of the workspace answers may have changed (an agent registered, started,
   * stopped, evicted, came back or was marked lost; a team gained or lost an agent or a project): a cached
   * roster of the workspace's projects goes at once (decision 105). The roster is computed from the rows of
   * one workspace only, so the workspace is the whole scope of the change.
   */
  | { kind: 'roster_changed'; workspace_id: string }
  /**
   * A workflow contract of the project was created or changed (published by the Workflow API replica that wrote
   * it): every replica drops its compiled contracts of the project, so an intent resolves against it at once on
   * any replica (decision 109).
   */
  | { kind: 'contracts_changed'; project_id: string; workspace_id: string };

/** The Redis pub/sub channel of the notices, under the deployment's key prefix (`svc` unless configured). */
export function credentialNoticeChannel(prefix: string): string {
  return `${prefix}:credential-notices`;
}

export interface CredentialNoticePublisher {
  /** Announces a change after it is committed. Never throws: a notice that cannot be sent is logged. */
  publish(notice: CredentialNotice): Promise<void>;
}

/** A publisher that sends nothing, for a hub without Redis (caches then fall back to their own limits). */
export const silentCredentialNotices: CredentialNoticePublisher = { publish: async () => undefined };

export function createCredentialNoticePublisher(options: {
  redis: Redis;
  prefix: string;
  logger: Logger;
}): CredentialNoticePublisher {
  const channel = credentialNoticeChannel(options.prefix);
  return {
    async publish(notice) {
      try {
        await options.redis.publish(channel, JSON.stringify(notice));
      } catch (error) {
        options.logger.warn({ err: error, notice: notice.kind }, 'credential notice not published');
      }
    },
  };
}

function parseNotice(message: string): CredentialNotice | undefined {
  let value: unknown;
  try {
    value = JSON.parse(message);
  } catch {
    return undefined;
  }
  const v = value as Record<string, unknown> | null;
  if (typeof v !== 'object' || v === null) return undefined;
  const text = (key: string) => typeof v[key] === 'string' && (v[key] as string).length > 0;
  if (v.kind === 'api_key_revoked' && text('key_id') && text('workspace_id')) {
    return { kind: 'api_key_revoked', key_id: v.key_id as string, workspace_id: v.workspace_id as string };
  }
  if (v.kind === 'member_changed' && text('workspace_id') && text('participant_id')) {
    return {
      kind: 'member_changed',
      workspace_id: v.workspace_id as string,
      participant_id: v.participant_id as string,
    };
  }
  if (
    v.kind === 'agent_revoked' &&
    text('agent_id') &&
    text('workspace_id') &&
    text('tokens_expire_by') &&
    !Number.isNaN(Date.parse(v.tokens_expire_by as string))
  ) {
    return {
      kind: 'agent_revoked',
      agent_id: v.agent_id as string,
      workspace_id: v.workspace_id as string,
      tokens_expire_by: v.tokens_expire_by as string,
    };
  }
  if (v.kind === 'project_changed' && text('project_id') && text('workspace_id')) {
    return {
      kind: 'project_changed',
      project_id: v.project_id as string,
      workspace_id: v.workspace_id as string,
    };
  }
  if (v.kind === 'roster_changed' && text('workspace_id')) {
    return { kind: 'roster_changed', workspace_id: v.workspace_id as string };
  }
  if (v.kind === 'contracts_changed' && text('project_id') && text('workspace_id')) {
    return {
      kind: 'contracts_changed',
      project_id: v.project_id as string,
      workspace_id: v.workspace_id as string,
    };
  }
  return undefined;
}

export interface CredentialNoticeSubscription {
  /** Resolves once the subscription is active (notices published before are not seen). */
  ready: Promise<void>;
  close(): Promise<void>;
}

/**
 * Listens for notices on a connection of its own (`subscriber`, e.g. `redis.duplicate()`), which it closes.
 * It resubscribes by itself after a reconnect (ioredis does); malformed messages are ignored.
 */
export function subscribeCredentialNotices(options: {
  subscriber: Redis;
  prefix: string;
  logger: Logger;
  onNotice: (notice: CredentialNotice) => void;
}): CredentialNoticeSubscription {
  const channel = credentialNoticeChannel(options.prefix);
  const { subscriber, logger } = options;
  subscriber.on('message', (from: string, message: string) => {
    if (from !== channel) return;
    const notice = parseNotice(message);
    if (!notice) {
      logger.warn('malformed credential notice ignored');
      return;
    }
    try {
      options.onNotice(notice);
    } catch (error) {
      logger.error({ err: error }, 'credential notice handler failed');
    }
  });
  subscriber.on('error', (error: Error) => logger.warn({ err: error }, 'credential notice subscriber error'));
  const ready = subscriber.subscribe(channel).then(
    () => undefined,
    (error: unknown) => {
      logger.warn({ err: error }, 'credential notices not subscribed; caches fall back to their time limits');
    },
  );
  return {
    ready,
    async close() {
      await ready;
      subscriber.disconnect();
    },
  };
}
