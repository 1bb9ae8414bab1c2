import type { HubInternalClient } from '@svc/contracts';
import { PROJECT_CACHE_MS, PROJECT_STALE_MS, createProjectDirectory } from './project-directory';

/** The hub's project lookup answering with this status and problem code. */
function hubAnswering(status: number, code?: string): HubInternalClient {
  return {
    GET: async () => ({
      response: new Response(null, { status }),
      ...(code ? { error: { code } } : {}),
    }),
  } as unknown as HubInternalClient;
}

describe('project directory', () => {
  test('when the hub does not know the project, then it is not found', async () => {
    await expect(
      createProjectDirectory({ hub: hubAnswering(404, 'project_not_found') }).find('prj_x'),
    ).resolves.toBeNull();
  });

  test('when the hub refuses the id as malformed, then it names no project (not an unreachable hub)', async () => {
    const directory = createProjectDirectory({ hub: hubAnswering(400, 'validation_failed') });
    await expect(directory.find('4-_-m_--2Vv0')).resolves.toBeNull();
  });

  test('when the hub answers anything else without a project, then the hub is unavailable (503)', async () => {
    await expect(
      createProjectDirectory({ hub: hubAnswering(500, 'internal_error') }).find('prj_x'),
    ).rejects.toMatchObject({ status: 503, code: 'hub_unavailable' });
    await expect(
      createProjectDirectory({ hub: hubAnswering(400, 'text_invalid') }).find('prj_x'),
    ).rejects.toMatchObject({
      status: 503,
      code: 'hub_unavailable',
    });
  });

  test('when many requests miss at once, then the hub is asked once and all get its answer', async () => {
    let calls = 0;
    let answer: (value: unknown) => void = () => undefined;
    const hub = {
      GET: () => {
        calls += 1;
        return new Promise((resolve) => (answer = resolve));
      },
    } as unknown as HubInternalClient;
    const directory = createProjectDirectory({ hub });
    const finds = Array.from({ length: 20 }, () => directory.find('prj_1'));
    answer({
      response: new Response(null, { status: 200 }),
      data: { data: { id: 'prj_1', code: 'P1', name: 'One', workspace: { id: 'ws_1', slug: 'one' } } },
    });
    const found = await Promise.all(finds);
    expect(calls).toBe(1);
    expect(new Set(found.map((p) => p?.code))).toEqual(new Set(['P1']));
    // Answered from the cache afterwards; a failed question is not remembered.
    await directory.find('prj_1');
    expect(calls).toBe(1);
  });

  test('when the shared question fails, then every waiting request gets the 503 and the next one asks again', async () => {
    let calls = 0;
    const hub = {
      GET: async () => {
        calls += 1;
        throw new Error('connect ECONNREFUSED');
      },
    } as unknown as HubInternalClient;
    const directory = createProjectDirectory({ hub });
    const results = await Promise.allSettled([directory.find('prj_1'), directory.find('prj_1')]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);
    expect(calls).toBe(1);
    await expect(directory.find('prj_1')).rejects.toMatchObject({ code: 'hub_unavailable' });
    expect(calls).toBe(2);
  });

  test('when a project is forgotten, then the next request asks the hub, and an answer asked for before is not kept', async () => {
    let calls = 0;
    let archivedAt: string | null = null;
    const answers: ((value: unknown) => void)[] = [];
    const hub = {
      GET: () => {
        calls += 1;
        const data = {
          id: 'prj_1',
          code: 'P1',
          name: 'One',
          workspace: { id: 'ws_1', slug: 'one' },
          archived_at: archivedAt,
        };
        return new Promise((resolve) =>
          answers.push(() => resolve({ response: new Response(null, { status: 200 }), data: { data } })),
        );
      },
    } as unknown as HubInternalClient;
    const directory = createProjectDirectory({ hub });
    const first = directory.find('prj_1');
    answers.shift()!(undefined);
    expect((await first)?.archivedAt).toBeNull();
    await directory.find('prj_1');
    expect(calls).toBe(1); // from the cache
    archivedAt = '2026-11-29T00:00:00.000Z';
    directory.forget('prj_1');
    const racing = directory.find('prj_1');
    expect(calls).toBe(2);
    // Another notice while that question is in flight: its answer is used once, not cached.
    directory.forget('prj_1');
    answers.shift()!(undefined);
    await racing;
    const after = directory.find('prj_1');
    expect(calls).toBe(3);
    answers.shift()!(undefined);
    expect((await after)?.archivedAt).toBe('2026-11-29T00:00:00.000Z');
    await directory.find('prj_1');
    expect(calls).toBe(3);
  });

  test('when a cached project has expired, then it is answered at once while one refresh asks the hub; a failed refresh keeps it until the stale time is over', async () => {
    let clock = 1_000_000;
    let calls = 0;
    let hubUp = true;
    const hub = {
      GET: async () => {
        calls += 1;
        if (!hubUp) throw new Error('connect ECONNREFUSED');
        const data = {
          id: 'prj_1',
          code: 'P1',
          name: `One ${calls}`,
          workspace: { id: 'ws_1', slug: 'one' },
        };
        return { response: new Response(null, { status: 200 }), data: { data } };
      },
    } as unknown as HubInternalClient;
    const directory = createProjectDirectory({ hub, now: () => clock });
    expect((await directory.find('prj_1'))?.name).toBe('One 1');

    // Expired: the old entry at once, one refresh behind it, whose answer the next request gets.
    clock += PROJECT_CACHE_MS + 1;
    const stale = directory.find('prj_1');
    const alsoStale = directory.find('prj_1');
    expect((await stale)?.name).toBe('One 1');
    expect((await alsoStale)?.name).toBe('One 1');
    expect(calls).toBe(2);
    await new Promise((resolve) => setImmediate(resolve));
    expect((await directory.find('prj_1'))?.name).toBe('One 2');

    // The hub is down: the entry is still answered within the stale time, and refused after it.
    hubUp = false;
    clock += PROJECT_CACHE_MS + 1;
    expect((await directory.find('prj_1'))?.name).toBe('One 2');
    clock += PROJECT_STALE_MS;
    await expect(directory.find('prj_1')).rejects.toMatchObject({ status: 503, code: 'hub_unavailable' });
  });
});
