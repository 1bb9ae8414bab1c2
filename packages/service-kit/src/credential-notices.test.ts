import { randomBytes } from 'node:crypto';
import { testRedisUrl } from '../../testing/src/servers';
import { createCredentialNoticePublisher, subscribeCredentialNotices } from './credential-notices';
import type { CredentialNotice } from './credential-notices';
import { createLogger } from './logger';
import { createRedis } from './redis';

const logger = createLogger({ name: 'credential-notices-test', level: 'silent' });

test.each([
  ['roster_changed', { workspace_id: 'ws_1' }, { workspace_id: '' }],
  ['contracts_changed', { project_id: 'prj_1', workspace_id: 'ws_1' }, { project_id: 'prj_1' }],
] as const)(
  'when a %s notice is published, then a subscriber gets it, and one missing an id is ignored',
  async (kind, fields, incomplete) => {
    const redis = createRedis(testRedisUrl(), { name: 'credential-notices-test' });
    const prefix = `svct-${randomBytes(4).toString('hex')}`;
    const seen: CredentialNotice[] = [];
    const subscription = subscribeCredentialNotices({
      subscriber: redis.duplicate({ lazyConnect: true }),
      prefix,
      logger,
      onNotice: (notice) => seen.push(notice),
    });
    try {
      await subscription.ready;
      const channel = `${prefix}:credential-notices`;
      await redis.publish(channel, JSON.stringify({ kind }));
      await redis.publish(channel, JSON.stringify({ kind, ...incomplete }));
      const notice = { kind, ...fields } as CredentialNotice;
      await createCredentialNoticePublisher({ redis, prefix, logger }).publish(notice);
      // Messages on one channel arrive in order: the valid one last.
      const deadline = Date.now() + 2_000;
      while (seen.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
      expect(seen).toEqual([notice]);
    } finally {
      await subscription.close();
      await redis.quit();
    }
  },
);
