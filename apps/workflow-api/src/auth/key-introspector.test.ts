import { generateApiKey } from '@svc/auth';
import type { HubInternalClient } from '@svc/contracts';
import { createKeyIntrospector } from './key-introspector';

/** The hub's introspection as the Workflow API sees it: answers every well-formed key inactive, counts calls. */
function countingHub() {
  const keys: string[] = [];
  const hub = {
    POST: async (_path: string, init: { body: { key: string } }) => {
      keys.push(init.body.key);
      return {
        data: { data: { active: false, cache_ttl_seconds: 30 } },
        response: new Response(null, { status: 200 }),
      };
    },
  } as unknown as HubInternalClient;
  return { hub, keys };
}

describe('key introspector', () => {
  test('when the value is not in the API-key format, then it is inactive without asking the hub', async () => {
    const { hub, keys } = countingHub();
    const introspector = createKeyIntrospector({ hub });
    const jwt = `${'a'.repeat(40)}.${'b'.repeat(300)}.${'c'.repeat(86)}`;
    for (const value of [jwt, 'svc_short', `svc_${'a'.repeat(12)}_${'b'.repeat(42)}`, 'x'.repeat(300)]) {
      await expect(introspector.introspect(value)).resolves.toBeNull();
    }
    expect(keys).toEqual([]);
  });

  test('when a well-formed key is presented, then the hub is asked once and its answer cached', async () => {
    const { hub, keys } = countingHub();
    const introspector = createKeyIntrospector({ hub });
    const { key } = generateApiKey();
    await expect(introspector.introspect(key)).resolves.toBeNull();
    await expect(introspector.introspect(key)).resolves.toBeNull();
    expect(keys).toEqual([key]);
  });
});
